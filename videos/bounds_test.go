package videos_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/videos"
)

// getWithHost fetches path with the given Host header.
func getWithHost(t *testing.T, b *testBundle, path, host string) videos.Video {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.server.URL+path, nil)
	require.NoError(t, err)
	req.Host = host
	req.Header.Set("Authorization", "Bearer "+keyAlice)
	res, err := b.server.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "body: %s", body)
	var v videos.Video
	require.NoError(t, json.Unmarshal(body, &v))
	return v
}

func TestContentURLsAreNeverBuiltFromTheHostHeader(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	id := b.create(t, keyAlice, map[string]any{"model": modelFirstKind, "prompt": "a kite", "size": "1280x720"})
	b.complete(t, true)

	v := getWithHost(t, b, "/v1/videos/"+id, "evil.example")
	require.Equal(t, "/v1/videos/"+id+"/content", v.Metadata.URL)
	require.Equal(t, "/v1/videos/"+id+"/content?variant=thumbnail", v.Metadata.ThumbnailURL)
}

func TestContentURLsUseThePublicURL(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithPublicURL("https://api.example.com/")}})
	id := b.create(t, keyAlice, map[string]any{"model": modelFirstKind, "prompt": "a kite", "size": "1280x720"})
	b.complete(t, true)

	v := getWithHost(t, b, "/v1/videos/"+id, "evil.example")
	require.Equal(t, "https://api.example.com/v1/videos/"+id+"/content", v.Metadata.URL)
	require.Equal(t, "https://api.example.com/v1/videos/"+id+"/content?variant=thumbnail", v.Metadata.ThumbnailURL)
}

// requireRefused checks a creation refused with a 400 in the flat shape
// whose message contains want, and that no task was stored.
func requireRefused(t *testing.T, b *testBundle, r reply, want string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, r.status, "body: %s", r.body)
	m := r.json(t)
	require.Equal(t, "invalid_request", m["code"], "body: %s", r.body)
	require.Contains(t, m["message"], want)
	require.Equal(t, m["message"], m["error"].(map[string]any)["message"])
	require.Zero(t, b.store.Len(), "nothing is stored")
}

func TestCreateRefusesUnmodelledFieldsOverTheLimit(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("x", 2000)
	create := map[string]any{"model": modelFirstKind, "prompt": "a kite", "size": "1280x720"}
	multimodal := map[string]any{"model": modelMulti, "mode": "t2v", "prompt": "a kite"}
	with := func(m map[string]any, k string, v any) map[string]any {
		c := map[string]any{k: v}
		for k, v := range m {
			c[k] = v
		}
		return c
	}
	tests := []struct {
		name, path string
		body       any
		param      string
	}{
		{"top level", "/v1/videos", with(create, "blob", big), "blob"},
		{"metadata object", "/v1/videos", with(create, "metadata", map[string]string{"a": big}), "metadata"},
		{"input_reference", "/v1/videos", with(create, "input_reference", map[string]any{"image_url": "https://example.com/a.png", "note": big}), "note"},
		{"many small fields", "/v1/videos", func() map[string]any {
			m := create
			for i := range 200 {
				m = with(m, fmt.Sprintf("f%03d", i), "0123456789")
			}
			return m
		}(), ""},
		{"multimodal", "/v1/vendorai/videos", with(multimodal, "blob", big), "blob"},
		{"multimodal asset", "/v1/vendorai/videos", with(with(multimodal, "mode", "i2v"), "assets",
			[]map[string]any{{"role": "image", "url": "https://example.com/a.png", "blob": big}}), "blob"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, bundleOptions{handler: []videos.Option{videos.WithMaxExtraBytes(1024)}})
			r := b.postJSON(t, tc.path, keyAlice, tc.body)
			requireRefused(t, b, r, "more than the 1 KiB limit")
			if tc.param != "" {
				require.Equal(t, tc.param, r.json(t)["error"].(map[string]any)["param"])
			}
		})
	}

	t.Run("FormFieldsAsWell", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bundleOptions{handler: []videos.Option{videos.WithMaxExtraBytes(1024)}})
		r := b.postForm(t, keyAlice, formField{name: "model", value: modelFirstKind}, formField{name: "prompt", value: "a kite"},
			formField{name: "size", value: "1280x720"}, formField{name: "user", value: big})
		requireRefused(t, b, r, "more than the 1 KiB limit")
	})

	t.Run("UnderTheLimitTheyAreKept", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bundleOptions{handler: []videos.Option{videos.WithMaxExtraBytes(1024)}})
		id := b.create(t, keyAlice, with(create, "user", "ada"))
		task, err := b.store.Get(t.Context(), "owner:alice", id)
		require.NoError(t, err)
		require.JSONEq(t, `"ada"`, string(task.Request.Create.Extra["user"]))
	})

	t.Run("TheDefaultIs64KiB", func(t *testing.T) {
		t.Parallel()
		b := setup(t, bundleOptions{})
		r := b.postJSON(t, "/v1/videos", keyAlice, with(create, "blob", strings.Repeat("x", 64<<10)))
		requireRefused(t, b, r, "more than the 64 KiB limit")
	})
}

func TestCreateRefusesAMultipartFormWithTooManyFields(t *testing.T) {
	t.Parallel()
	fields := []formField{{name: "model", value: modelFirstKind}, {name: "prompt", value: "a kite"}, {name: "size", value: "1280x720"}}
	for i := range 3000 {
		fields = append(fields, formField{name: fmt.Sprintf("f%d", i), value: "x"})
	}

	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithMaxFormFields(8)}})
	requireRefused(t, b, b.postForm(t, keyAlice, fields[:9]...), "more than 8 fields")
	b.create(t, keyAlice, map[string]any{"model": modelFirstKind, "prompt": "a kite", "size": "1280x720"})
	r := b.postForm(t, keyAlice, fields[:8]...)
	require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)

	d := setup(t, bundleOptions{})
	requireRefused(t, d, d.postForm(t, keyAlice, fields...), "more than 32 fields")
}
