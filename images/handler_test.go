package images_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image/jpeg"
	"image/png"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/images"
	"github.com/gatewaykit/gatewaykit/internal/servedtest"
	"github.com/gatewaykit/gatewaykit/models"
)

func catalog() models.Catalog {
	return models.NewMemoryCatalog(append(demo.AccessModels(), demo.TextModels()...)...)
}

var clock = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newMux mounts a handler of backend, with opts, on a mux.
func newMux(backend images.Backend, opts ...images.Option) *http.ServeMux {
	mux := http.NewServeMux()
	opts = append([]images.Option{endpoint.WithClock(func() time.Time { return clock }), images.WithURLKey([]byte("test key"))}, opts...)
	images.Register(mux, images.NewHandler(catalog(), backend, opts...))
	return mux
}

func decode(t *testing.T, body []byte) images.Reply {
	t.Helper()
	var r images.Reply
	require.NoError(t, json.Unmarshal(body, &r), string(body))
	return r
}

var (
	b64Value = regexp.MustCompile(`"b64_json":"[^"]+"`)
	urlValue = regexp.MustCompile(`"url":"[^"]+"`)
)

func TestHandlerGolden(t *testing.T) {
	t.Parallel()
	h := newMux(demo.NewImageBackend())
	tests := []struct{ name, body string }{
		{"b64_json", `{"model":"demo-image","prompt":"a red kite over the sea","size":"64x32","response_format":"b64_json"}`},
		{"url_two", `{"model":"demo-image","prompt":"two cats","n":2,"size":"32x32","quality":"hd"}`},
		{"jpeg", `{"model":"demo-image","prompt":"night","size":"16x16","output_format":"jpeg","output_compression":50,"response_format":"b64_json"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := servedtest.PostJSON(h, "/v1/images/generations", tc.body)
			require.Equal(t, 200, w.Code, w.Body.String())
			got := b64Value.ReplaceAll(w.Body.Bytes(), []byte(`"b64_json":"<base64>"`))
			got = urlValue.ReplaceAll(got, []byte(`"url":"<url>"`))
			servedtest.Golden(t, filepath.Join("testdata", tc.name+".response.json"), got)
		})
	}
}

func TestHandlerDrawsRealImages(t *testing.T) {
	t.Parallel()
	h := newMux(demo.NewImageBackend())
	b64 := decode(t, servedtest.PostJSON(h, "/v1/images/generations",
		`{"model":"demo-image","prompt":"a red kite","size":"96x48","n":2,"response_format":"b64_json"}`).Body.Bytes())
	require.Len(t, b64.Data, 2)
	var pngs [][]byte
	for _, d := range b64.Data {
		raw, err := base64.StdEncoding.DecodeString(d.B64JSON)
		require.NoError(t, err)
		img, err := png.Decode(bytes.NewReader(raw))
		require.NoError(t, err)
		require.Equal(t, 96, img.Bounds().Dx())
		require.Equal(t, 48, img.Bounds().Dy())
		pngs = append(pngs, raw)
	}
	require.NotEqual(t, pngs[0], pngs[1], "the n images differ")

	t.Run("TheURLServesTheSameImage", func(t *testing.T) {
		t.Parallel()
		r := decode(t, servedtest.PostJSON(h, "/v1/images/generations",
			`{"model":"demo-image","prompt":"a red kite","size":"96x48","n":2}`).Body.Bytes())
		require.Len(t, r.Data, 2)
		for i, d := range r.Data {
			require.Empty(t, d.B64JSON)
			require.True(t, strings.HasPrefix(d.URL, "/v1/images/files/"), d.URL)
			require.True(t, strings.HasSuffix(d.URL, ".png"), d.URL)
			w := servedtest.Do(h, "GET", d.URL, "", nil)
			require.Equal(t, 200, w.Code, w.Body.String())
			require.Equal(t, "image/png", w.Header().Get("Content-Type"))
			require.Equal(t, pngs[i], w.Body.Bytes())
		}
	})
	t.Run("ForgedOrExpiredURLsAreNotFound", func(t *testing.T) {
		t.Parallel()
		r := decode(t, servedtest.PostJSON(h, "/v1/images/generations", `{"model":"demo-image","prompt":"kite","size":"16x16"}`).Body.Bytes())
		u := r.Data[0].URL
		parts := strings.Split(strings.TrimPrefix(u, "/v1/images/files/"), ".")
		other := newMux(demo.NewImageBackend(), images.WithURLKey([]byte("another key")))
		later := newMux(demo.NewImageBackend(), endpoint.WithClock(func() time.Time { return clock.Add(images.URLLifetime + time.Second) }))
		for _, c := range []struct {
			name string
			h    http.Handler
			url  string
		}{
			{"OtherKey", other, u},
			{"Expired", later, u},
			{"BadSignature", h, "/v1/images/files/" + parts[0] + ".AAAAAAAAAAAAAAAAAAAAAA.png"},
			{"Garbage", h, "/v1/images/files/nothing.png"},
		} {
			w := servedtest.Do(c.h, "GET", c.url, "", nil)
			servedtest.RequireError(t, w, 404, "not_found", "", "expired")
		}
		w := servedtest.Do(h, "GET", u, "", nil)
		require.Equal(t, 200, w.Code, "the original still works")
	})
	t.Run("PublicURL", func(t *testing.T) {
		t.Parallel()
		h := newMux(demo.NewImageBackend(), images.WithPublicURL("https://api.example.com/"))
		r := decode(t, servedtest.PostJSON(h, "/v1/images/generations", `{"model":"demo-image","prompt":"kite","size":"16x16"}`).Body.Bytes())
		require.True(t, strings.HasPrefix(r.Data[0].URL, "https://api.example.com/v1/images/files/"), r.Data[0].URL)
	})
	t.Run("JPEG", func(t *testing.T) {
		t.Parallel()
		r := decode(t, servedtest.PostJSON(h, "/v1/images/generations", `{"model":"demo-image","prompt":"kite","size":"32x16","output_format":"jpeg"}`).Body.Bytes())
		require.True(t, strings.HasSuffix(r.Data[0].URL, ".jpeg"), r.Data[0].URL)
		w := servedtest.Do(h, "GET", r.Data[0].URL, "", nil)
		require.Equal(t, "image/jpeg", w.Header().Get("Content-Type"))
		img, err := jpeg.Decode(w.Body)
		require.NoError(t, err)
		require.Equal(t, 32, img.Bounds().Dx())
	})
}

// fixedBackend returns what it is told to; it cannot redraw.
type fixedBackend struct {
	res *images.Result
	err error
}

func (b fixedBackend) Generate(context.Context, *images.Params) (*images.Result, error) {
	return b.res, b.err
}

func TestHandlerBackendURLs(t *testing.T) {
	t.Parallel()
	h := newMux(fixedBackend{res: &images.Result{Images: []images.Image{{URL: "https://cdn.example.com/1.png"}}}})
	r := decode(t, servedtest.PostJSON(h, "/v1/images/generations", `{"model":"demo-image","prompt":"kite"}`).Body.Bytes())
	require.Equal(t, "https://cdn.example.com/1.png", r.Data[0].URL)
}

func TestHandlerErrors(t *testing.T) {
	t.Parallel()
	png1 := []images.Image{{Data: []byte("\x89PNG\r\n\x1a\n")}}
	tests := []struct {
		name    string
		backend images.Backend
		body    string
		status  int
		code    string
		param   string
		msg     string
	}{
		{name: "MissingModel", body: `{"prompt":"x"}`, status: 400, code: "invalid_request_error", param: "model", msg: "model is required"},
		{name: "ChatModel", body: `{"model":"demo-chat","prompt":"x"}`, status: 400, code: "invalid_request_error", param: "model", msg: `"image-generation"`},
		{name: "MissingPrompt", body: `{"model":"demo-image"}`, status: 400, code: "invalid_request_error", param: "prompt", msg: "prompt is required"},
		{name: "TooMany", body: `{"model":"demo-image","prompt":"x","n":11}`, status: 400, code: "invalid_request_error", param: "n", msg: "between 1 and 10"},
		{name: "BadSize", body: `{"model":"demo-image","prompt":"x","size":"big"}`, status: 400, code: "invalid_request_error", param: "size", msg: `"big"`},
		{name: "SizeTheDemoDoesNotDraw", body: `{"model":"demo-image","prompt":"x","size":"4096x4096"}`, status: 400, code: "invalid_request_error", param: "size", msg: "2048x2048"},
		{name: "BadResponseFormat", body: `{"model":"demo-image","prompt":"x","response_format":"file"}`, status: 400, code: "invalid_request_error", param: "response_format", msg: `"file"`},
		{name: "BadOutputFormat", body: `{"model":"demo-image","prompt":"x","output_format":"gif"}`, status: 400, code: "invalid_request_error", param: "output_format", msg: `"gif"`},
		{name: "WebPTheDemoDoesNotDraw", body: `{"model":"demo-image","prompt":"x","output_format":"webp"}`, status: 400, code: "invalid_request_error", param: "output_format", msg: "png and jpeg"},
		{name: "BadCompression", body: `{"model":"demo-image","prompt":"x","output_compression":101}`, status: 400, code: "invalid_request_error", param: "output_compression", msg: "between 0 and 100"},
		{name: "BackendClientError", backend: fixedBackend{err: apierrors.InvalidRequest("prompt", "rejected by the safety system")}, body: `{"model":"demo-image","prompt":"x"}`, status: 400, code: "invalid_request_error", param: "prompt", msg: "safety"},
		{name: "BackendFailure", backend: fixedBackend{err: errors.New("gpu on fire")}, body: `{"model":"demo-image","prompt":"x"}`, status: 500, code: "internal_server_error", msg: "internal server error"},
		{name: "WrongCount", backend: fixedBackend{res: &images.Result{}}, body: `{"model":"demo-image","prompt":"x"}`, status: 500, code: "internal_server_error", msg: "internal server error"},
		{name: "NoURLAndNoRedraw", backend: fixedBackend{res: &images.Result{Images: png1}}, body: `{"model":"demo-image","prompt":"x"}`, status: 500, code: "internal_server_error", msg: "internal server error"},
		{name: "NoDataForB64", backend: fixedBackend{res: &images.Result{Images: []images.Image{{URL: "https://x"}}}}, body: `{"model":"demo-image","prompt":"x","response_format":"b64_json"}`, status: 500, code: "internal_server_error", msg: "internal server error"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := tc.backend
			if b == nil {
				b = demo.NewImageBackend()
			}
			w := servedtest.PostJSON(newMux(b), "/v1/images/generations", tc.body)
			servedtest.RequireError(t, w, tc.status, tc.code, tc.param, tc.msg)
		})
	}
}

func TestHandlerChargesTheKey(t *testing.T) {
	t.Parallel()
	h, keys := servedtest.Keyed(t, newMux(demo.NewImageBackend()), auth.UnlimitedQuota())
	w := servedtest.PostJSON(h, "/v1/images/generations", `{"model":"demo-image","prompt":"one two three","size":"64x64","n":2}`)
	require.Equal(t, 200, w.Code, w.Body.String())
	r := decode(t, w.Body.Bytes())
	require.Equal(t, 3, r.Usage.InputTokens)
	require.Equal(t, 2, r.Usage.OutputTokens)
	s := keys.Settled()
	require.Len(t, s, 1)
	require.Equal(t, demo.ImageModel, s[0].Model)
	require.Equal(t, int64(3), s[0].InputTokens)
	require.Equal(t, int64(2), s[0].OutputTokens)
	require.Equal(t, int64(5), s[0].Used)

	get := servedtest.Do(h, "GET", r.Data[0].URL, "", nil)
	require.Equal(t, 200, get.Code)
	require.Len(t, keys.Settled(), 1, "fetching the file is not charged again")
}

func TestNewHandlerPanicsOnNil(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "images: NewHandler: nil Backend", func() { images.NewHandler(catalog(), nil) })
}
