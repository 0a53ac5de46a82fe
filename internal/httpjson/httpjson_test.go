package httpjson_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
)

type payload struct {
	Model string `json:"model"`
	N     int    `json:"n"`
}

func TestDecode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		contentType string
		body        string
		max         int64
		wantErr     string // substring of the message; empty for success
		wantParam   string
	}{
		{name: "valid", contentType: "application/json", body: `{"model":"m","n":2}`},
		{name: "charset and no content type", contentType: "", body: `{"model":"m"}`},
		{name: "json with charset", contentType: "application/json; charset=utf-8", body: `{"model":"m"}`},
		{name: "form content type", contentType: "application/x-www-form-urlencoded", body: `{"model":"m"}`, wantErr: `Content-Type must be application/json, got "application/x-www-form-urlencoded"`},
		{name: "empty", body: "  ", wantErr: "request body is empty"},
		{name: "syntax", body: `{"model":}`, wantErr: "request body is not valid JSON: invalid character '}'"},
		{name: "truncated", body: `{"model":"m"`, wantErr: "unexpected end of input"},
		{name: "wrong type", body: `{"n":"two"}`, wantErr: `n must be an integer, got string`, wantParam: "n"},
		{name: "not an object", body: `[1]`, wantErr: "request body must be a JSON object, got array"},
		{name: "null", body: ` null `, wantErr: "request body must be a JSON object, got null"},
		{name: "string", body: `"m"`, wantErr: "request body must be a JSON object, got string"},
		{name: "member twice", body: `{"model":"m","model":"n"}`, wantErr: "model must appear once in the request body", wantParam: "model"},
		{name: "member twice, folded", body: `{"model":"m","Model":"n"}`, wantErr: "model must appear once in the request body", wantParam: "model"},
		{name: "unknown member twice", body: `{"model":"m","x":{"y":1,"y":2}}`, wantErr: "x.y must appear once in the request body", wantParam: "x.y"},
		{name: "trailing value", body: `{"model":"m"} {}`, wantErr: "single JSON value"},
		{name: "too large", body: `{"model":"` + strings.Repeat("x", 100) + `"}`, max: 64, wantErr: "request body is larger than the 64 bytes limit"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(tc.body))
			if tc.contentType != "" {
				r.Header.Set("Content-Type", tc.contentType)
			}
			var p payload
			err := httpjson.Decode(httptest.NewRecorder(), r, tc.max, &p)
			if tc.wantErr == "" {
				require.NoError(t, err)
				require.Equal(t, "m", p.Model)
				return
			}
			var e *apierrors.Error
			require.True(t, errors.As(err, &e), "got %T %v", err, err)
			require.Equal(t, 400, e.Status)
			require.Contains(t, e.Message, tc.wantErr)
			require.Equal(t, tc.wantParam, e.Param)
		})
	}
}

func TestDecodeTooLargeWithoutContentLength(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(strings.Repeat(" ", 2048)))
	r.ContentLength = -1
	err := httpjson.Decode(httptest.NewRecorder(), r, 1024, &payload{})
	require.ErrorContains(t, err, "larger than the 1 KiB limit")
}

func TestReadBody(t *testing.T) {
	t.Parallel()
	const body = `{"model":"m","n":2}`
	for _, length := range []int64{int64(len(body)), -1} {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.ContentLength = length
		got, err := httpjson.ReadBody(httptest.NewRecorder(), r, 1024)
		require.NoError(t, err, "Content-Length %d", length)
		require.Equal(t, body, string(got), "Content-Length %d", length)
	}
}

func TestReadBodyShorterThanContentLength(t *testing.T) {
	t.Parallel()
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"model":`))
	r.ContentLength = 100
	_, err := httpjson.ReadBody(httptest.NewRecorder(), r, 1024)
	var e *apierrors.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, http.StatusBadRequest, e.Status)
	require.Equal(t, "could not read the request body", e.Message)
}

func TestFormatBytes(t *testing.T) {
	t.Parallel()
	for in, want := range map[int64]string{32 << 20: "32 MiB", 512 << 10: "512 KiB", 100: "100 bytes", 1500: "1500 bytes"} {
		require.Equal(t, want, httpjson.FormatBytes(in))
	}
}

func FuzzUnmarshal(f *testing.F) {
	for _, s := range []string{`{"model":"m"}`, `{`, `[]`, `{"n":1e999}`, "\x00", `{"model":"m"}x`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p payload
		err := httpjson.Unmarshal(data, &p)
		if err != nil {
			var e *apierrors.Error
			require.True(t, errors.As(err, &e), "every failure is an API error, got %T", err)
			require.Equal(t, 400, e.Status)
		}
	})
}

// failingBody fails every read with err.
type failingBody struct{ err error }

func (b failingBody) Read([]byte) (int, error) { return 0, b.err }
func (b failingBody) Close() error             { return nil }

func TestReadBodyPassesAPIErrorsOfTheBodyThrough(t *testing.T) {
	t.Parallel()
	timeout := &apierrors.Error{Status: http.StatusRequestTimeout, Code: "request_timeout", Message: "too slow"}
	for _, length := range []int64{10, -1} {
		r := httptest.NewRequest("POST", "/", nil)
		r.Body, r.ContentLength = failingBody{timeout}, length
		_, err := httpjson.ReadBody(httptest.NewRecorder(), r, 100)
		var api *apierrors.Error
		require.True(t, errors.As(err, &api))
		require.Equal(t, http.StatusRequestTimeout, api.Status, "length %d", length)

		r.Body = failingBody{errors.New("connection reset")}
		_, err = httpjson.ReadBody(httptest.NewRecorder(), r, 100)
		require.True(t, errors.As(err, &api))
		require.Equal(t, http.StatusBadRequest, api.Status)
	}
}
