package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/relay/relaytest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/videos"
)

// errOutage is what a store answers while its database cannot be reached.
var errOutage = errors.New("dial tcp 10.0.0.5:5432: connect: connection refused")

// outage makes the stores of a gateway fail, one dependency at a time, as
// they do when their database cannot be reached.
type outage struct {
	lookup, reserve, responses, tasks, contents atomic.Bool
}

func failIf(down *atomic.Bool) error {
	if down.Load() {
		return errOutage
	}
	return nil
}

type outageKeys struct {
	auth.KeyStore
	o *outage
}

func (k outageKeys) Lookup(ctx context.Context, secret string) (*auth.Key, error) {
	if err := failIf(&k.o.lookup); err != nil {
		return nil, err
	}
	return k.KeyStore.Lookup(ctx, secret)
}

func (k outageKeys) Reserve(ctx context.Context, keyID string, amount int64) error {
	if err := failIf(&k.o.reserve); err != nil {
		return err
	}
	return k.KeyStore.Reserve(ctx, keyID, amount)
}

type outageResponses struct {
	responses.Store
	o *outage
}

func (s outageResponses) Get(ctx context.Context, owner, id string) (*responses.StoredResponse, error) {
	if err := failIf(&s.o.responses); err != nil {
		return nil, err
	}
	return s.Store.Get(ctx, owner, id)
}

func (s outageResponses) Delete(ctx context.Context, owner, id string) error {
	if err := failIf(&s.o.responses); err != nil {
		return err
	}
	return s.Store.Delete(ctx, owner, id)
}

type outageTasks struct {
	videos.TaskStore
	o *outage
}

func (s outageTasks) Create(ctx context.Context, t *videos.Task) error {
	if err := failIf(&s.o.tasks); err != nil {
		return err
	}
	return s.TaskStore.Create(ctx, t)
}

func (s outageTasks) Get(ctx context.Context, owner, id string) (*videos.Task, error) {
	if err := failIf(&s.o.tasks); err != nil {
		return nil, err
	}
	return s.TaskStore.Get(ctx, owner, id)
}

func (s outageTasks) List(ctx context.Context, p videos.ListParams) ([]*videos.Task, bool, error) {
	if err := failIf(&s.o.tasks); err != nil {
		return nil, false, err
	}
	return s.TaskStore.List(ctx, p)
}

func (s outageTasks) Delete(ctx context.Context, owner, id string) error {
	if err := failIf(&s.o.tasks); err != nil {
		return err
	}
	return s.TaskStore.Delete(ctx, owner, id)
}

type outageContents struct {
	videos.ContentStore
	o *outage
}

func (s outageContents) Open(ctx context.Context, id string, v videos.Variant) (*videos.Content, error) {
	if err := failIf(&s.o.contents); err != nil {
		return nil, err
	}
	return s.ContentStore.Open(ctx, id, v)
}

// outageBundle is the demo gateway with every family mounted, a relay that
// passes four models through to a fake upstream, and stores that fail on
// demand; task is a completed video task of sk-demo's, with its content.
// Beside the demo keys, sk-demo-spent (of sk-demo's account) has spent
// its budget in money.
type outageBundle struct {
	o    *outage
	g    *gateway.Gateway
	task string
}

func newOutageBundle(t *testing.T, extra ...func(*gateway.Config)) *outageBundle {
	t.Helper()
	up := relaytest.NewUpstream()
	t.Cleanup(up.Close)
	route := func(model string, api relay.API) relay.Route {
		return relay.Route{Model: model, Upstreams: []relay.Upstream{{BaseURL: up.BaseURL(), Key: "sk-upstream", Model: relaytest.ModeOK, API: api}}}
	}
	rl, err := relay.New([]relay.Route{
		route("remote-embed", relay.APIOpenAI), route("remote-whisper", relay.APIOpenAI),
		route("remote-claude", relay.APIAnthropic), route("remote-gemini", relay.APIGemini),
	})
	require.NoError(t, err)

	b := &outageBundle{o: new(outage)}
	tasks := videos.NewMemoryStore(nil)
	contents := videos.NewMemoryContentStore(nil)
	b.g = newDemo(t, func(c *gateway.Config) {
		withAccessDemo(c)
		ms, err := c.Catalog.List(context.Background())
		require.NoError(t, err)
		remote := func(id string, types ...models.EndpointType) models.Model {
			return models.Model{ID: id, OwnedBy: "upstream", Created: 1, EndpointTypes: types}
		}
		ms = append(ms, remote("remote-embed", models.Embeddings), remote("remote-whisper", models.AudioTranscription),
			remote("remote-claude", models.Compat), remote("remote-gemini", models.Compat))
		c.Catalog = models.NewMemoryCatalog(ms...)
		c.Relay = rl
		require.NoError(t, c.Keys.(*auth.MemoryKeyStore).Add(t.Context(), "sk-demo-spent",
			auth.Key{ID: "key-demo-spent", Owner: "demo", Quota: auth.Quota{Unlimited: true, BudgetUSD: 1, CostUSD: 1}}))
		c.Keys = outageKeys{c.Keys, b.o}
		c.ResponseStore = outageResponses{responses.NewMemoryStore(nil), b.o}
		c.Tasks = outageTasks{tasks, b.o}
		c.Contents = outageContents{contents, b.o}
		for _, f := range extra {
			f(c)
		}
	})

	// A task created through the API, completed by hand (no runner runs).
	status, body := do(t, b.g, "POST", "/v1/videos", "sk-demo", `{"model":"demo-video","prompt":"kite","seconds":"4","size":"1280x720"}`)
	require.Equal(t, 200, status, body)
	var created struct{ ID string }
	require.NoError(t, json.Unmarshal([]byte(body), &created))
	claimed, err := tasks.Claim(t.Context(), videos.ClaimParams{Worker: "test"})
	require.NoError(t, err)
	require.NoError(t, contents.Put(t.Context(), videos.PutParams{TaskID: claimed.ID, Variant: videos.VariantVideo, ContentType: "video/mp4", Data: []byte("mp4")}))
	_, err = tasks.Update(t.Context(), videos.UpdateParams{ID: claimed.ID, Attempt: claimed.Attempts, Complete: &videos.Completion{}})
	require.NoError(t, err)
	b.task = created.ID
	status, _ = do(t, b.g, "GET", "/v1/videos/"+b.task+"/content", "sk-demo", "")
	require.Equal(t, 200, status, "the content is there while its store answers")
	return b
}

// unavailableBody is the body of a 503 of apierrors.Unavailable in shape.
func unavailableBody(t *testing.T, shape apierrors.Shape) any {
	t.Helper()
	rec := httptest.NewRecorder()
	apierrors.Renderer{Shape: shape}.Write(rec, httptest.NewRequest("GET", "/", nil), apierrors.Unavailable(nil))
	var v any
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &v))
	return v
}

// multipartBody is a transcription request for model.
func multipartBody(t *testing.T, model string) (body, contentType string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	require.NoError(t, mw.WriteField("model", model))
	fw, err := mw.CreateFormFile("file", "s.wav")
	require.NoError(t, err)
	_, err = fw.Write([]byte("RIFF0000WAVE"))
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	return buf.String(), mw.FormDataContentType()
}

// TestAStoreOutageIsAnOutage: when a store cannot be reached, every route
// that needs it answers 503 service_unavailable with Retry-After, in the
// error shape of its family, and never sends the store's error.
func TestAStoreOutageIsAnOutage(t *testing.T) {
	t.Parallel()
	transcription, transcriptionType := multipartBody(t, "demo-whisper")
	remoteTranscription, remoteTranscriptionType := multipartBody(t, "remote-whisper")
	chat := `{"model":"demo-chat","messages":[{"role":"user","content":"hi"}]}`
	messages := `{"model":"%s","max_tokens":64,"messages":[{"role":"user","content":"hi"}]}`
	gemini := `{"contents":[{"parts":[{"text":"hi"}]}]}`
	tests := []struct {
		name, method, path, body string
		header                   map[string]string
		down                     func(o *outage) *atomic.Bool
		shape                    apierrors.Shape
	}{
		// The key store fails the auth middleware: every route.
		{name: "lookup/models", method: "GET", path: "/v1/models", down: func(o *outage) *atomic.Bool { return &o.lookup }},
		{name: "lookup/messages", method: "POST", path: "/v1/messages", body: strings.Replace(messages, "%s", "demo-chat", 1), shape: apierrors.Messages,
			header: map[string]string{"x-api-key": "sk-demo", "anthropic-version": "2023-06-01"}, down: func(o *outage) *atomic.Bool { return &o.lookup }},
		{name: "lookup/gemini", method: "POST", path: "/v1beta/models/demo-chat:generateContent", body: gemini, shape: apierrors.Google,
			header: map[string]string{"x-goog-api-key": "sk-demo"}, down: func(o *outage) *atomic.Bool { return &o.lookup }},
		{name: "lookup/video status", method: "GET", path: "/v1/videos/{task}", down: func(o *outage) *atomic.Bool { return &o.lookup }},

		// The key store fails the reservation of every family that spends.
		{name: "reserve/chat", method: "POST", path: "/v1/chat/completions", body: chat},
		{name: "reserve/chat stream", method: "POST", path: "/v1/chat/completions", body: `{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
		{name: "reserve/completions", method: "POST", path: "/v1/completions", body: `{"model":"demo-instruct","prompt":"hi"}`},
		{name: "reserve/responses", method: "POST", path: "/v1/responses", body: `{"model":"demo-chat","input":"hi"}`},
		{name: "reserve/responses compact", method: "POST", path: "/v1/responses/compact", body: `{"model":"demo-chat","input":"hi"}`},
		{name: "reserve/messages", method: "POST", path: "/v1/messages", body: strings.Replace(messages, "%s", "demo-chat", 1), shape: apierrors.Messages,
			header: map[string]string{"x-api-key": "sk-demo", "anthropic-version": "2023-06-01"}},
		{name: "reserve/gemini", method: "POST", path: "/v1beta/models/demo-chat:generateContent", body: gemini, shape: apierrors.Google,
			header: map[string]string{"x-goog-api-key": "sk-demo"}},
		{name: "reserve/gemini stream", method: "POST", path: "/v1beta/models/demo-chat:streamGenerateContent?alt=sse", body: gemini, shape: apierrors.Google,
			header: map[string]string{"x-goog-api-key": "sk-demo"}},
		{name: "reserve/embeddings", method: "POST", path: "/v1/embeddings", body: `{"model":"demo-embedding","input":"hi"}`},
		{name: "reserve/moderations", method: "POST", path: "/v1/moderations", body: `{"model":"demo-moderation","input":"hi"}`},
		{name: "reserve/rerank", method: "POST", path: "/v1/rerank", body: `{"model":"demo-rerank","query":"hi","documents":["hi"]}`},
		{name: "reserve/images", method: "POST", path: "/v1/images/generations", body: `{"model":"demo-image","prompt":"hi","size":"16x16"}`},
		{name: "reserve/speech", method: "POST", path: "/v1/audio/speech", body: `{"model":"demo-tts","input":"hi","voice":"alloy"}`},
		{name: "reserve/transcription", method: "POST", path: "/v1/audio/transcriptions", body: transcription, header: map[string]string{"Content-Type": transcriptionType}},
		{name: "reserve/relayed embeddings", method: "POST", path: "/v1/embeddings", body: `{"model":"remote-embed","input":"hi"}`},
		{name: "reserve/relayed transcription", method: "POST", path: "/v1/audio/transcriptions", body: remoteTranscription, header: map[string]string{"Content-Type": remoteTranscriptionType}},
		{name: "reserve/relayed messages", method: "POST", path: "/v1/messages", body: strings.Replace(messages, "%s", "remote-claude", 1), shape: apierrors.Messages,
			header: map[string]string{"x-api-key": "sk-demo", "anthropic-version": "2023-06-01"}},
		{name: "reserve/relayed gemini", method: "POST", path: "/v1beta/models/remote-gemini:generateContent", body: gemini, shape: apierrors.Google,
			header: map[string]string{"x-goog-api-key": "sk-demo"}},
		{name: "reserve/video create", method: "POST", path: "/v1/videos", body: `{"model":"demo-video","prompt":"kite","seconds":"4","size":"1280x720"}`, shape: apierrors.Flat},
		{name: "reserve/video create multimodal", method: "POST", path: "/v1/vendorai/videos", body: `{"model":"demo-video-pro","mode":"t2v","prompt":"kite"}`, shape: apierrors.Flat},

		// The responses store.
		{name: "responses/get", method: "GET", path: "/v1/responses/resp_1", down: func(o *outage) *atomic.Bool { return &o.responses }},
		{name: "responses/delete", method: "DELETE", path: "/v1/responses/resp_1", down: func(o *outage) *atomic.Bool { return &o.responses }},
		{name: "responses/input items", method: "GET", path: "/v1/responses/resp_1/input_items", down: func(o *outage) *atomic.Bool { return &o.responses }},
		{name: "responses/previous_response_id", method: "POST", path: "/v1/responses", body: `{"model":"demo-chat","input":"hi","previous_response_id":"resp_1"}`,
			down: func(o *outage) *atomic.Bool { return &o.responses }},

		// The task store and the content store.
		{name: "tasks/create", method: "POST", path: "/v1/videos", body: `{"model":"demo-video","prompt":"kite","seconds":"4","size":"1280x720"}`, shape: apierrors.Flat,
			down: func(o *outage) *atomic.Bool { return &o.tasks }},
		{name: "tasks/status", method: "GET", path: "/v1/videos/{task}", shape: apierrors.Content, down: func(o *outage) *atomic.Bool { return &o.tasks }},
		{name: "tasks/list", method: "GET", path: "/v1/videos", shape: apierrors.Content, down: func(o *outage) *atomic.Bool { return &o.tasks }},
		{name: "tasks/delete", method: "DELETE", path: "/v1/videos/{task}", shape: apierrors.Content, down: func(o *outage) *atomic.Bool { return &o.tasks }},
		{name: "tasks/content", method: "GET", path: "/v1/videos/{task}/content", shape: apierrors.Content, down: func(o *outage) *atomic.Bool { return &o.tasks }},
		{name: "contents/content", method: "GET", path: "/v1/videos/{task}/content", shape: apierrors.Content, down: func(o *outage) *atomic.Bool { return &o.contents }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newOutageBundle(t)
			down := tc.down
			if down == nil {
				down = func(o *outage) *atomic.Bool { return &o.reserve }
			}
			down(b.o).Store(true)

			req := httptest.NewRequest(tc.method, strings.ReplaceAll(tc.path, "{task}", b.task), strings.NewReader(tc.body))
			if tc.header["x-api-key"] == "" && tc.header["x-goog-api-key"] == "" {
				req.Header.Set("Authorization", "Bearer sk-demo")
			}
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			for k, v := range tc.header {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			b.g.ServeHTTP(rec, req)

			require.Equal(t, http.StatusServiceUnavailable, rec.Code, "body: %s", rec.Body)
			require.Equal(t, "2", rec.Header().Get("Retry-After"))
			require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			require.NotContains(t, rec.Body.String(), "10.0.0.5", "the store's error is never sent")
			var got any
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &got), "body: %s", rec.Body)
			if diff := cmp.Diff(unavailableBody(t, tc.shape), got); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}
