package videos_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/videos"
)

func dataURI(typ string, data []byte) string {
	return "data:" + typ + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// requireFlatError checks a creation failure: 400, the flat body with
// its mirrored error object, and the golden file.
func requireFlatError(t *testing.T, r reply, name, wantCode string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, r.status, "body: %s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	m := r.json(t)
	require.Equal(t, wantCode, m["code"], "body: %s", r.body)
	require.NotEmpty(t, m["message"])
	e := m["error"].(map[string]any)
	require.Equal(t, m["message"], e["message"], "the error object mirrors the message")
	require.Equal(t, m["code"], e["code"])
	golden(t, name, r.body)
}

func TestCreateJSONErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithMaxImageBytes(1024)}})
	ok := map[string]any{"model": modelFirstKind, "prompt": "a fox", "size": "1280x720", "seconds": 8}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range ok {
			m[kk] = vv
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name string
		body any
		code string
	}{
		{"create_empty_body", "", "invalid_request"},
		{"create_invalid_json", `{"model":`, "invalid_request"},
		{"create_not_an_object", `[1,2]`, "invalid_request"},
		{"create_missing_model", with("model", nil), "invalid_request"},
		{"create_unknown_model", with("model", "no-such-model"), "model_not_found"},
		{"create_not_a_video_model", with("model", modelChat), "invalid_request"},
		{"create_missing_prompt", with("prompt", nil), "invalid_request"},
		{"create_prompt_too_long", with("prompt", strings.Repeat("é", 2501)), "invalid_request"},
		{"create_prompt_too_long_for_model", map[string]any{"model": modelShort, "prompt": "eleven char"}, "invalid_request"},
		{"create_seconds_not_allowed", with("seconds", 5), "invalid_request"},
		{"create_seconds_string_not_allowed", with("seconds", "6"), "invalid_request"},
		{"create_seconds_not_a_number", with("seconds", "soon"), "invalid_request"},
		{"create_seconds_wrong_type", with("seconds", true), "invalid_request"},
		{"create_seconds_fraction_any_model", map[string]any{"model": modelMulti, "prompt": "x", "seconds": "4.5"}, "invalid_request"},
		{"create_missing_size", with("size", nil), "invalid_request"},
		{"create_size_not_allowed", with("size", "640x360"), "invalid_request"},
		{"create_size_malformed", map[string]any{"model": modelMulti, "prompt": "x", "size": "big"}, "invalid_request"},
		{"create_reference_not_an_image", with("input_reference", map[string]any{"image_url": dataURI("image/png", []byte("hello, world"))}), "invalid_request"},
		{"create_reference_too_large", with("input_reference", map[string]any{"image_url": dataURI("image/png", append(pngImage, make([]byte, 2048)...))}), "invalid_request"},
		{"create_reference_not_base64", with("input_reference", map[string]any{"image_url": "data:image/png,raw"}), "invalid_request"},
		{"create_reference_bad_url", with("input_reference", map[string]any{"image_url": "ftp://example.com/a.png"}), "invalid_request"},
		{"create_reference_file_id", with("input_reference", map[string]any{"file_id": "file_123"}), "invalid_request"},
		{"create_reference_empty", with("input_reference", map[string]any{}), "invalid_request"},
		{"create_reference_wrong_type", with("input_reference", 12), "invalid_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireFlatError(t, b.postJSON(t, "/v1/videos", keyAlice, tc.body), tc.name, tc.code)
		})
	}
	require.Zero(t, b.store.Len(), "no failed request created a task")
}

func TestCreateRefusesOtherContentTypesAndLargeBodies(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithMaxRequestBytes(512)}})
	requireFlatError(t, b.do(t, http.MethodPost, "/v1/videos", keyAlice, "text/plain", strings.NewReader("a fox")), "create_wrong_content_type", "invalid_request")
	big := `{"model":"first-kind","prompt":"` + strings.Repeat("x", 1024) + `"}`
	requireFlatError(t, b.postJSON(t, "/v1/videos", keyAlice, big), "create_body_too_large", "invalid_request")
	body, ct := multipartBody(t, formField{name: "prompt", value: strings.Repeat("x", 1024)})
	requireFlatError(t, b.do(t, http.MethodPost, "/v1/videos", keyAlice, ct, body), "create_form_too_large", "invalid_request")
}

func TestCreateMultipartErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithMaxImageBytes(1024)}})
	base := []formField{{name: "model", value: modelFirstKind}, {name: "prompt", value: "a fox"}, {name: "size", value: "1280x720"}}
	tests := []struct {
		name   string
		fields []formField
		code   string
	}{
		{"form_seconds_not_allowed", append(base, formField{name: "seconds", value: "5"}), "invalid_request"},
		{"form_missing_prompt", []formField{{name: "model", value: modelFirstKind}, {name: "size", value: "1280x720"}}, "invalid_request"},
		{"form_unknown_model", []formField{{name: "model", value: "nope"}, {name: "prompt", value: "x"}}, "model_not_found"},
		{"form_file_not_an_image", append(base, formField{name: "input_reference", value: "just text", filename: "ref.png"}), "invalid_request"},
		{"form_file_too_large", append(base, formField{name: "input_reference", value: string(pngImage) + strings.Repeat("\x00", 2048), filename: "ref.png"}), "invalid_request"},
		{"form_file_in_another_field", append(base, formField{name: "prompt_file", value: "x", filename: "p.txt"}), "invalid_request"},
		{"form_duplicate_field", append(base, formField{name: "prompt", value: "again"}), "invalid_request"},
		{"form_reference_bad_url", append(base, formField{name: "input_reference[image_url]", value: "not a url"}), "invalid_request"},
		{"form_reference_bad_json", append(base, formField{name: "input_reference", value: `{"image_url":`}), "invalid_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireFlatError(t, b.postForm(t, keyAlice, tc.fields...), tc.name, tc.code)
		})
	}
	requireFlatError(t, b.do(t, http.MethodPost, "/v1/videos", keyAlice, "multipart/form-data", strings.NewReader("x")), "form_no_boundary", "invalid_request")
	body, ct := multipartBody(t)
	requireFlatError(t, b.do(t, http.MethodPost, "/v1/videos", keyAlice, ct, body), "form_empty", "invalid_request")
	require.Zero(t, b.store.Len())
}

func TestMultimodalErrors(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	img := map[string]any{"role": "image", "url": "https://example.com/a.png"}
	tests := []struct {
		name string
		body any
		code string
	}{
		{"mm_missing_model", map[string]any{"mode": "t2v", "prompt": "x"}, "invalid_request"},
		{"mm_unknown_model", map[string]any{"model": "nope", "mode": "t2v", "prompt": "x"}, "model_not_found"},
		{"mm_missing_mode", map[string]any{"model": modelMulti, "prompt": "x"}, "invalid_request"},
		{"mm_unknown_mode", map[string]any{"model": modelMulti, "mode": "v2v", "prompt": "x"}, "invalid_request"},
		{"mm_mode_not_enabled", map[string]any{"model": modelT2VOnly, "mode": "i2v", "assets": []any{img}}, "invalid_request"},
		{"mm_missing_prompt_t2v", map[string]any{"model": modelMulti, "mode": "t2v"}, "invalid_request"},
		{"mm_missing_prompt_ref_image", map[string]any{"model": modelMulti, "mode": "ref_image", "assets": []any{map[string]any{"role": "reference_images", "url": "https://e.com/r.png"}}}, "invalid_request"},
		{"mm_missing_prompt_video_edit", map[string]any{"model": modelMulti, "mode": "video_edit", "assets": []any{map[string]any{"role": "source_video", "url": "https://e.com/v.mp4"}}}, "invalid_request"},
		{"mm_i2v_without_image", map[string]any{"model": modelMulti, "mode": "i2v", "prompt": "x"}, "invalid_request"},
		{"mm_i2v_two_images", map[string]any{"model": modelMulti, "mode": "i2v", "assets": []any{img, img}}, "invalid_request"},
		{"mm_first_last_frame_without_last", map[string]any{"model": modelMulti, "mode": "first_last_frame", "assets": []any{map[string]any{"role": "first_frame", "url": "https://e.com/f.png"}}}, "invalid_request"},
		{"mm_ref_image_without_references", map[string]any{"model": modelMulti, "mode": "ref_image", "prompt": "x"}, "invalid_request"},
		{"mm_video_extend_with_image", map[string]any{"model": modelMulti, "mode": "video_extend", "assets": []any{img}}, "invalid_request"},
		{"mm_t2v_with_asset", map[string]any{"model": modelMulti, "mode": "t2v", "prompt": "x", "assets": []any{img}}, "invalid_request"},
		{"mm_unknown_role", map[string]any{"model": modelMulti, "mode": "i2v", "assets": []any{map[string]any{"role": "picture", "url": "https://e.com/a.png"}}}, "invalid_request"},
		{"mm_asset_without_url", map[string]any{"model": modelMulti, "mode": "i2v", "assets": []any{map[string]any{"role": "image"}}}, "invalid_request"},
		{"mm_asset_not_an_image", map[string]any{"model": modelMulti, "mode": "i2v", "assets": []any{map[string]any{"role": "image", "url": dataURI("image/png", []byte("text"))}}}, "invalid_request"},
		{"mm_source_video_not_a_video", map[string]any{"model": modelMulti, "mode": "video_extend", "assets": []any{map[string]any{"role": "source_video", "url": dataURI("video/mp4", pngImage)}}}, "invalid_request"},
		{"mm_bad_resolution", map[string]any{"model": modelMulti, "mode": "t2v", "prompt": "x", "resolution": "4k"}, "invalid_request"},
		{"mm_resolution_not_allowed", map[string]any{"model": modelT2VOnly, "mode": "t2v", "prompt": "x", "resolution": "1080p"}, "invalid_request"},
		{"mm_duration_zero", map[string]any{"model": modelMulti, "mode": "t2v", "prompt": "x", "duration_sec": 0}, "invalid_request"},
		{"mm_duration_not_allowed", map[string]any{"model": modelT2VOnly, "mode": "t2v", "prompt": "x", "duration_sec": 7}, "invalid_request"},
		{"mm_duration_wrong_type", map[string]any{"model": modelMulti, "mode": "t2v", "prompt": "x", "duration_sec": "long"}, "invalid_request"},
		{"mm_bad_aspect_ratio", map[string]any{"model": modelMulti, "mode": "t2v", "prompt": "x", "aspect_ratio": "wide"}, "invalid_request"},
		{"mm_prompt_too_long", map[string]any{"model": modelShort, "mode": "t2v", "prompt": "twelve chars"}, "invalid_request"},
		{"mm_assets_wrong_type", map[string]any{"model": modelMulti, "mode": "i2v", "assets": "https://e.com/a.png"}, "invalid_request"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			requireFlatError(t, b.postJSON(t, "/v1/vendorai/videos", keyAlice, tc.body), tc.name, tc.code)
		})
	}
	requireFlatError(t, b.do(t, http.MethodPost, "/v1/vendorai/videos", keyAlice, "multipart/form-data; boundary=x", strings.NewReader("")), "mm_not_json", "invalid_request")
	require.Zero(t, b.store.Len())
}

func TestCreateJSONAndMultipartSucceed(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	tests := []struct {
		name        string
		send        func(t *testing.T) reply
		wantSeconds string
		wantSize    string
		check       func(t *testing.T, req videos.Request)
	}{
		{
			name: "json with seconds as a number",
			send: func(t *testing.T) reply {
				return b.postJSON(t, "/v1/videos", keyAlice, map[string]any{"model": modelFirstKind, "prompt": strings.Repeat("é", 2500), "size": "720x1280", "seconds": 12, "user": "u-1"})
			},
			wantSeconds: "12", wantSize: "720x1280",
			check: func(t *testing.T, req videos.Request) {
				require.Equal(t, `"u-1"`, string(req.Create.Extra["user"]), "unknown fields are kept")
			},
		},
		{
			name: "json with seconds as a string and a data URI reference",
			send: func(t *testing.T) reply {
				return b.postJSON(t, "/v1/videos", keyAlice, map[string]any{"model": modelFirstKind, "prompt": "x", "size": "1280x720", "seconds": "16",
					"input_reference": map[string]any{"image_url": dataURI("image/png", pngImage)}})
			},
			wantSeconds: "16", wantSize: "1280x720",
			check: func(t *testing.T, req videos.Request) {
				typ, data, err := videos.DecodeDataURI(req.Create.InputReference.ImageURL)
				require.NoError(t, err)
				require.Equal(t, "image/png", typ)
				require.Equal(t, pngImage, data)
			},
		},
		{
			name: "json with a URL reference and the model's defaults",
			send: func(t *testing.T) reply {
				return b.postJSON(t, "/v1/videos", keyAlice, map[string]any{"model": "demo-video-pro", "prompt": "x",
					"input_reference": map[string]any{"image_url": "https://example.com/ref.jpg"}})
			},
			wantSeconds: "4", wantSize: "1280x720",
		},
		{
			name: "multipart with an uploaded file",
			send: func(t *testing.T) reply {
				return b.postForm(t, keyAlice, formField{name: "model", value: modelFirstKind}, formField{name: "prompt", value: "a fox"},
					formField{name: "size", value: "1792x1024"}, formField{name: "seconds", value: "20"},
					formField{name: "input_reference", value: string(pngImage), filename: "anonymous_file"},
					formField{name: "style", value: "noir"})
			},
			wantSeconds: "20", wantSize: "1792x1024",
			check: func(t *testing.T, req videos.Request) {
				typ, data, err := videos.DecodeDataURI(req.Create.InputReference.ImageURL)
				require.NoError(t, err)
				require.Equal(t, "image/png", typ, "sniffed, not the declared octet-stream")
				require.Equal(t, pngImage, data)
				require.Equal(t, `"noir"`, string(req.Create.Extra["style"]))
			},
		},
		{
			name: "multipart with input_reference[image_url]",
			send: func(t *testing.T) reply {
				return b.postForm(t, keyAlice, formField{name: "model", value: modelFirstKind}, formField{name: "prompt", value: "a fox"},
					formField{name: "size", value: "1280x720"}, formField{name: "input_reference[image_url]", value: "https://example.com/a.webp"})
			},
			wantSeconds: "", wantSize: "1280x720",
			check: func(t *testing.T, req videos.Request) {
				require.Equal(t, "https://example.com/a.webp", req.Create.InputReference.ImageURL)
			},
		},
		{
			name: "multimodal i2v without prompt",
			send: func(t *testing.T) reply {
				return b.postJSON(t, "/v1/vendorai/videos", keyAlice, map[string]any{"model": modelMulti, "mode": "i2v",
					"assets": []any{map[string]any{"role": "image", "url": dataURI("image/png", pngImage)}}, "resolution": "1080p", "aspect_ratio": "9:16",
					"duration_sec": 6.5, "gen_tier": "pro", "hd_upscale": "on", "prompt_optimize": true, "camera_control": "pan"})
			},
			wantSeconds: "6.5", wantSize: "1080x1920",
			check: func(t *testing.T, req videos.Request) {
				m := req.Multimodal
				require.Equal(t, "pro", m.GenTier)
				require.Equal(t, "on", m.HDUpscale)
				require.Equal(t, "pan", m.CameraControl)
				require.True(t, *m.PromptOptimize)
			},
		},
		{
			name: "multimodal alias path, first_last_frame, model default duration",
			send: func(t *testing.T) reply {
				return b.postJSON(t, "/v1/vendor/videos", keyAlice, map[string]any{"model": modelMulti, "mode": "first_last_frame", "aspect_ratio": "3:2",
					"assets": []any{map[string]any{"role": "first_frame", "url": "https://e.com/1.png"}, map[string]any{"role": "last_frame", "url": "https://e.com/2.png"}}})
			},
			wantSeconds: "5", wantSize: "1080x720",
		},
		{
			name: "multimodal video_edit with references",
			send: func(t *testing.T) reply {
				return b.postJSON(t, "/v1/vendorai/videos", keyAlice, map[string]any{"model": modelMulti, "mode": "video_edit", "prompt": "make it snow",
					"assets": []any{map[string]any{"role": "source_video", "url": "https://e.com/v.mp4"}, map[string]any{"role": "reference_images", "url": "https://e.com/r1.png"}, map[string]any{"role": "reference_images", "url": "https://e.com/r2.png"}}})
			},
			wantSeconds: "5", wantSize: "1280x720",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := tc.send(t)
			require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
			m := r.json(t)
			require.Len(t, m, 4, "id, status, progress, created_at: %s", r.body)
			require.Equal(t, "queued", m["status"])
			require.EqualValues(t, 0, m["progress"])
			require.EqualValues(t, b.now.Unix(), m["created_at"])
			id := m["id"].(string)
			require.True(t, strings.HasPrefix(id, "task_") && len(id) >= 5+26, id)
			task, err := b.store.Get(context.Background(), "owner:alice", id)
			require.NoError(t, err)
			require.Equal(t, tc.wantSeconds, task.Seconds)
			require.Equal(t, tc.wantSize, task.Size)
			if tc.check != nil {
				tc.check(t, task.Request)
			}
		})
	}
}

func TestStatusEndpoint(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithPollAfter(5 * time.Second)}})
	body := map[string]any{"model": modelFirstKind, "prompt": "a fox", "size": "1280x720", "seconds": 8}

	queued := b.create(t, keyAlice, body)
	r := b.do(t, http.MethodGet, "/v1/videos/"+queued, keyAlice, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, "5000", r.header.Get("openai-poll-after-ms"))
	golden(t, "status_queued", r.body)

	b.now = b.now.Add(time.Second) // claims go oldest first
	running := b.create(t, keyAlice, body)
	b.claim(t) // queued
	task := b.claim(t)
	require.Equal(t, running, task.ID)
	b.update(t, task, videos.UpdateParams{Progress: 42})
	r = b.do(t, http.MethodGet, "/v1/videos/"+running, keyAlice, "", nil)
	golden(t, "status_in_progress", r.body)

	b.now = b.now.Add(time.Second)
	failed := b.create(t, keyAlice, body)
	task = b.claim(t)
	b.update(t, task, videos.UpdateParams{Progress: 50, Fail: &videos.TaskError{Code: "generation_failed", Message: "The demo generator fails every prompt that contains #fail."}})
	r = b.do(t, http.MethodGet, "/v1/videos/"+failed, keyAlice, "", nil)
	require.Equal(t, http.StatusOK, r.status, "a failed task still answers 200")
	require.Empty(t, r.header.Get("openai-poll-after-ms"))
	golden(t, "status_failed", r.body)

	b.now = b.now.Add(time.Second)
	completed := b.create(t, keyAlice, body)
	b.complete(t, true)
	r = b.do(t, http.MethodGet, "/v1/videos/"+completed, keyAlice2, "", nil)
	require.Equal(t, http.StatusOK, r.status, "another key of the same account sees it")
	golden(t, "status_completed", r.body)
	m := r.json(t)
	require.Contains(t, m, "error")
	require.Nil(t, m["error"], `completed: "error": null`)
	require.Equal(t, "/v1/videos/"+completed+"/content", m["metadata"].(map[string]any)["url"], "a path relative to the client's origin")

	for name, get := range map[string]func() reply{
		"unknown":         func() reply { return b.do(t, http.MethodGet, "/v1/videos/task_doesnotexist", keyAlice, "", nil) },
		"another account": func() reply { return b.do(t, http.MethodGet, "/v1/videos/"+completed, keyBob, "", nil) },
		"malformed id":    func() reply { return b.do(t, http.MethodGet, "/v1/videos/..%2f..", keyAlice, "", nil) },
	} {
		r := get()
		require.Equal(t, http.StatusNotFound, r.status, name)
		m := r.json(t)
		require.Equal(t, "invalid_request_error", m["error"].(map[string]any)["type"], name)
		if name == "unknown" {
			golden(t, "status_not_found", r.body)
		}
	}
}

func TestStatusOfStatusesIsOnlyTheFourOfTheSpec(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	id := b.create(t, keyAlice, map[string]any{"model": modelMulti, "prompt": "x"})
	task := b.claim(t)
	b.update(t, task, videos.UpdateParams{Release: true})
	r := b.do(t, http.MethodGet, "/v1/videos/"+id, keyAlice, "", nil)
	require.Equal(t, "in_progress", r.json(t)["status"], "a released task is still in_progress")
}

func TestOwnerOfARequest(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	r := b.do(t, http.MethodPost, "/v1/videos", "", "application/json", strings.NewReader(`{}`))
	require.Equal(t, http.StatusUnauthorized, r.status)
	require.Equal(t, "missing_authorization", r.json(t)["error"].(map[string]any)["code"], "auth errors keep the general shape")

	// A handler mounted without the middleware serves the anonymous
	// owner: its requests share their tasks.
	h := videos.NewHandler(videos.NewMemoryStore(nil), testCatalog(), videos.NewMemoryContentStore(nil))
	rec := newRecorder()
	h.ServeHTTP(rec, newRequest(http.MethodGet, "/v1/videos", ""))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	// An OwnerFunc that refuses the request: 401.
	h = videos.NewHandler(videos.NewMemoryStore(nil), testCatalog(), videos.NewMemoryContentStore(nil),
		videos.WithOwner(func(context.Context) (string, bool) { return "", false }))
	rec = newRecorder()
	h.ServeHTTP(rec, newRequest(http.MethodGet, "/v1/videos", ""))
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.JSONEq(t, `{"error":{"message":"This endpoint needs an authenticated caller (an API key in the Authorization header).","type":"invalid_request_error","param":null,"code":"missing_authorization"}}`, rec.Body.String())
}

func TestMethodNotAllowed(t *testing.T) {
	t.Parallel()
	h := videos.NewHandler(videos.NewMemoryStore(nil), testCatalog(), videos.NewMemoryContentStore(nil),
		videos.WithOwner(func(context.Context) (string, bool) { return "o", true }))
	rec := newRecorder()
	h.ServeHTTP(rec, newRequest(http.MethodPut, "/v1/videos/task_x", ""))
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	require.Equal(t, "GET, HEAD, DELETE", rec.Header().Get("Allow"))
	var m map[string]any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &m))
	require.Equal(t, "Method PUT is not allowed here; use GET, HEAD, DELETE.", m["error"].(map[string]any)["message"])
}

func TestListPaginatesNewestFirst(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	var ids []string
	for i := range 5 {
		b.now = b.now.Add(time.Second)
		ids = append(ids, b.create(t, keyAlice, map[string]any{"model": modelMulti, "prompt": "fox " + string(rune('a'+i))}))
	}
	b.create(t, keyBob, map[string]any{"model": modelMulti, "prompt": "bob's"})
	b.complete(t, false) // the oldest of alice's

	page := func(query string) map[string]any {
		r := b.do(t, http.MethodGet, "/v1/videos"+query, keyAlice, "", nil)
		require.Equal(t, http.StatusOK, r.status, "body: %s", r.body)
		return r.json(t)
	}
	itemIDs := func(m map[string]any) []string {
		var out []string
		for _, v := range m["data"].([]any) {
			out = append(out, v.(map[string]any)["id"].(string))
		}
		return out
	}
	first := page("?limit=2")
	require.Equal(t, "list", first["object"])
	require.Equal(t, []string{ids[4], ids[3]}, itemIDs(first))
	require.Equal(t, ids[4], first["first_id"])
	require.Equal(t, ids[3], first["last_id"])
	require.Equal(t, true, first["has_more"])
	second := page("?limit=2&after=" + ids[3])
	require.Equal(t, []string{ids[2], ids[1]}, itemIDs(second))
	last := page("?limit=2&after=" + ids[1])
	require.Equal(t, []string{ids[0]}, itemIDs(last))
	require.Equal(t, false, last["has_more"])
	require.Equal(t, "completed", last["data"].([]any)[0].(map[string]any)["status"])
	require.Equal(t, []string{ids[0], ids[1], ids[2], ids[3], ids[4]}, itemIDs(page("?order=asc")))

	empty := b.do(t, http.MethodGet, "/v1/videos", keyAlice, "", nil, "Authorization", "Bearer "+keyBob)
	require.Len(t, empty.json(t)["data"], 1, "bob sees only his")

	for name, q := range map[string]string{
		"list_bad_limit":   "?limit=0",
		"list_limit_large": "?limit=101",
		"list_bad_order":   "?order=sideways",
		"list_bad_after":   "?after=task_unknown",
	} {
		r := b.do(t, http.MethodGet, "/v1/videos"+q, keyAlice, "", nil)
		require.Equal(t, http.StatusBadRequest, r.status, name)
		golden(t, name, r.body)
	}
	r := b.do(t, http.MethodGet, "/v1/videos?after="+ids[0], keyBob, "", nil)
	require.Equal(t, http.StatusBadRequest, r.status, "another account's task is no cursor")
}

func TestDeleteRemovesTaskAndContent(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{})
	id := b.create(t, keyAlice, map[string]any{"model": modelMulti, "prompt": "x"})
	b.complete(t, true)

	r := b.do(t, http.MethodDelete, "/v1/videos/"+id, keyBob, "", nil)
	require.Equal(t, http.StatusNotFound, r.status, "not bob's")
	r = b.do(t, http.MethodDelete, "/v1/videos/"+id, keyAlice, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.JSONEq(t, `{"id":"`+id+`","object":"video.deleted","deleted":true}`, string(r.body))
	_, err := b.contents.Open(context.Background(), id, videos.VariantVideo)
	require.ErrorIs(t, err, videos.ErrNoContent)
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/v1/videos/"+id, keyAlice, "", nil).status)
	r = b.do(t, http.MethodDelete, "/v1/videos/"+id, keyAlice, "", nil)
	require.Equal(t, http.StatusNotFound, r.status)
	golden(t, "delete_not_found", r.body)
}

func TestWithOwnerKeyOwnerScopesByKey(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithOwner(auth.KeyOwner)}})
	id := b.create(t, keyAlice, map[string]any{"model": modelMulti, "prompt": "x"})
	require.Equal(t, http.StatusOK, b.do(t, http.MethodGet, "/v1/videos/"+id, keyAlice, "", nil).status)
	require.Equal(t, http.StatusNotFound, b.do(t, http.MethodGet, "/v1/videos/"+id, keyAlice2, "", nil).status, "another key of the account")
}

func TestWithAllowedHidesModels(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithAllowed(func(_ context.Context, id string) bool { return id != modelMulti })}})
	requireFlatError(t, b.postJSON(t, "/v1/videos", keyAlice, map[string]any{"model": modelMulti, "prompt": "x"}), "create_model_not_allowed", "model_not_found")
}

func TestNotifyIsCalledAfterCreation(t *testing.T) {
	t.Parallel()
	calls := 0
	b := setup(t, bundleOptions{handler: []videos.Option{videos.WithNotify(func() { calls++ })}})
	b.create(t, keyAlice, map[string]any{"model": modelMulti, "prompt": "x"})
	b.postJSON(t, "/v1/videos", keyAlice, map[string]any{"model": modelMulti})
	require.Equal(t, 1, calls)
}

func TestNewHandlerPanicsOnNilDependencies(t *testing.T) {
	t.Parallel()
	require.PanicsWithValue(t, "videos: NewHandler: nil TaskStore", func() { videos.NewHandler(nil, testCatalog(), videos.NewMemoryContentStore(nil)) })
	require.PanicsWithValue(t, "videos: NewHandler: nil Catalog", func() { videos.NewHandler(videos.NewMemoryStore(nil), nil, videos.NewMemoryContentStore(nil)) })
	require.PanicsWithValue(t, "videos: NewHandler: nil ContentStore", func() { videos.NewHandler(videos.NewMemoryStore(nil), testCatalog(), nil) })
}

// The handler routes with a ServeMux of its own: every path answers in
// the content-download shape, with 405 and Allow for a method that the
// path does not take, 404 for any other path.
func TestRoutesOfTheHandler(t *testing.T) {
	t.Parallel()
	h := videos.NewHandler(videos.NewMemoryStore(nil), testCatalog(), videos.NewMemoryContentStore(nil),
		videos.WithOwner(func(context.Context) (string, bool) { return "o", true }))
	tests := []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodPut, "/v1/videos", 405, "GET, HEAD, POST"},
		{http.MethodGet, "/v1/vendorai/videos", 405, "POST"},
		{http.MethodDelete, "/v1/vendor/videos", 405, "POST"},
		{http.MethodPost, "/v1/videos/task_x", 405, "GET, HEAD, DELETE"},
		{http.MethodDelete, "/v1/videos/task_x/content", 405, "GET, HEAD"},
		{http.MethodGet, "/v1/videos/task_x/other", 404, ""},
		{http.MethodGet, "/api/v1/videos", 404, ""},
		{http.MethodGet, "/v1/videos", 200, ""},
		{http.MethodHead, "/v1/videos/task_x", 404, ""},
	}
	for _, tc := range tests {
		rec := newRecorder()
		h.ServeHTTP(rec, newRequest(tc.method, tc.path, ""))
		require.Equal(t, tc.status, rec.Code, "%s %s: %s", tc.method, tc.path, rec.Body.String())
		require.Equal(t, tc.allow, rec.Header().Get("Allow"), "%s %s", tc.method, tc.path)
	}
}
