package models_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
)

func TestRequire(t *testing.T) {
	t.Parallel()

	errDB := errors.New("db down")
	onlyBare := func(_ context.Context, id string) bool { return id == "bare" }

	tests := []struct {
		name    string
		catalog models.Catalog // default: testModels
		id      string
		need    models.EndpointType
		allow   models.AllowFunc
		wantID  string // on success
		status  int    // on failure
		body    string // on failure: the full general error body
		cause   error  // on failure, when set: errors.Is(err, cause)
	}{
		{name: "ChatModelForChat", id: "text-basic", need: models.Compat, wantID: "text-basic"},
		{name: "ModelWithSlashForResponses", id: "org/reasoner-2", need: models.CompatResponse, wantID: "org/reasoner-2"},
		{name: "VideoModelForVideo", id: "video-first-kind", need: models.CompatVideo, wantID: "video-first-kind"},
		{name: "EmptyNeedSkipsTypeCheck", id: "video-first-kind", wantID: "video-first-kind"},
		{name: "AllowedModel", id: "bare", need: models.CompatResponse, allow: onlyBare, wantID: "bare"},
		{
			name: "EmptyModel", id: "", need: models.Compat, status: 400,
			body: `{"error":{"message":"model is required","type":"invalid_request_error","param":"model","code":"invalid_request_error"}}`,
		},
		{
			name: "UnknownModel", id: "no-such-model", need: models.Compat, status: 404, cause: models.ErrNotFound,
			body: `{"error":{"message":"The model \"no-such-model\" does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"model_not_found"}}`,
		},
		{
			name: "ModelNotAllowed", id: "text-basic", need: models.Compat, allow: onlyBare, status: 404,
			body: `{"error":{"message":"The model \"text-basic\" does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"model_not_found"}}`,
		},
		{
			name: "UnknownModelNotAllowed", id: "no-such-model", need: models.Compat, allow: onlyBare, status: 404,
			body: `{"error":{"message":"The model \"no-such-model\" does not exist or you do not have access to it.","type":"invalid_request_error","param":"model","code":"model_not_found"}}`,
		},
		{
			name: "VideoModelForChat", id: "video-first-kind", need: models.Compat, status: 400,
			body: `{"error":{"message":"model \"video-first-kind\" does not support endpoint type \"compat\" (supported_endpoint_types: compat-video)","type":"invalid_request_error","param":"model","code":"invalid_request_error"}}`,
		},
		{
			name: "ChatModelForResponses", id: "text-basic", need: models.CompatResponse, status: 400,
			body: `{"error":{"message":"model \"text-basic\" does not support endpoint type \"compat-response\" (supported_endpoint_types: compat)","type":"invalid_request_error","param":"model","code":"invalid_request_error"}}`,
		},
		{
			name: "TextModelForVideo", id: "org/reasoner-2", need: models.CompatVideo, status: 400,
			body: `{"error":{"message":"model \"org/reasoner-2\" does not support endpoint type \"compat-video\" (supported_endpoint_types: compat, compat-response)","type":"invalid_request_error","param":"model","code":"invalid_request_error"}}`,
		},
		{
			name: "ModelWithoutTypes", id: "typeless", need: models.Compat, status: 400,
			catalog: models.NewMemoryCatalog(models.Model{ID: "typeless"}),
			body:    `{"error":{"message":"model \"typeless\" does not support endpoint type \"compat\" (supported_endpoint_types: none)","type":"invalid_request_error","param":"model","code":"invalid_request_error"}}`,
		},
		{
			name: "CatalogFails", id: "text-basic", need: models.Compat, status: 500, cause: errDB,
			catalog: failingCatalog{errDB},
			body:    `{"error":{"message":"internal server error","type":"server_error","param":null,"code":"internal_server_error"}}`,
		},
		{
			name: "CatalogAnswersAPIError", id: "text-basic", need: models.Compat, status: 502,
			catalog: failingCatalog{apierrors.BadGateway("catalogue upstream failed", errDB)},
			body:    `{"error":{"message":"catalogue upstream failed","type":"upstream_error","param":null,"code":"bad_gateway"}}`,
		},
		{
			name: "CatalogTimesOut", id: "text-basic", need: models.Compat, status: 504, cause: context.DeadlineExceeded,
			catalog: failingCatalog{context.DeadlineExceeded},
			body:    `{"error":{"message":"the request timed out","type":"timeout_error","param":null,"code":"gateway_timeout"}}`,
		},
	}

	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			catalog := tc.catalog
			if catalog == nil {
				catalog = models.NewMemoryCatalog(testModels()...)
			}
			m, err := models.Require(context.Background(), catalog, tc.id, tc.need, tc.allow)
			if tc.status == 0 {
				require.NoError(t, err)
				require.Equal(t, tc.wantID, m.ID)
				return
			}
			require.Error(t, err)
			require.Nil(t, m)
			if tc.cause != nil {
				require.ErrorIs(t, err, tc.cause)
			}
			status, body := render(t, err)
			require.Equal(t, tc.status, status)
			var want any
			require.NoError(t, json.Unmarshal([]byte(tc.body), &want))
			if diff := cmp.Diff(want, body); diff != "" {
				t.Errorf("error body mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRequirePassesCancellationThrough(t *testing.T) {
	t.Parallel()
	_, err := models.Require(context.Background(), failingCatalog{context.Canceled}, "text-basic", models.Compat, nil)
	require.ErrorIs(t, err, context.Canceled)

	// The renderer writes nothing for a client that has gone.
	rec := httptest.NewRecorder()
	apierrors.Renderer{}.Write(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil), err)
	require.Empty(t, rec.Body.String())
}

func TestRequireReturnsACopy(t *testing.T) {
	t.Parallel()
	c := models.NewMemoryCatalog(testModels()...)
	m, err := models.Require(context.Background(), c, "video-first-kind", models.CompatVideo, nil)
	require.NoError(t, err)
	m.Video.Seconds[0] = 99
	again, err := models.Require(context.Background(), c, "video-first-kind", models.CompatVideo, nil)
	require.NoError(t, err)
	require.Equal(t, 4, again.Video.Seconds[0])
}

// render writes err as a handler would and returns the status and the
// decoded body.
func render(t *testing.T, err error) (int, any) {
	t.Helper()
	rec := httptest.NewRecorder()
	apierrors.Renderer{}.Write(rec, httptest.NewRequest(http.MethodPost, "/v1/chat/completions", nil), err)
	var body any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), "body: %s", rec.Body)
	return rec.Code, body
}
