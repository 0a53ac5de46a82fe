package console_test

// Browser tests of what the console must not let happen: a key swapped
// in behind a person's back, a hostile upstream's script running on the
// gateway's origin, a key leaving, a forgotten key still reading content
// from the cache, and a huge reply freezing the page.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/console"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/relay"
)

// TestBrowserKeyFragmentIsReadOnceAtLoad: a #key= fragment fills in the
// key when the page loads; one that appears later (a page that opened
// the console changing its fragment) is not read, and one that would
// replace a key already set is used only if the person says so.
func TestBrowserKeyFragmentIsReadOnceAtLoad(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	ctx := newTab(t)
	open(t, ctx, e, "sk-demo")
	stored := `sessionStorage.getItem('gatewaykit.key')`
	require.Equal(t, "sk-demo", eval[string](t, ctx, stored))

	// The fragment changes while the page is open: the key is taken out
	// of the address bar, and not used.
	eval[bool](t, ctx, `location.hash = '#key=sk-demo-unknown&view=x', true`)
	wait(t, ctx, `!document.getElementById('key-note').hidden`)
	require.Equal(t, "#view=x", eval[string](t, ctx, `location.hash`))
	require.Equal(t, "sk-demo", eval[string](t, ctx, stored))
	require.Equal(t, "sk-demo", eval[string](t, ctx, `document.getElementById('key-input').value`))
	require.True(t, eval[bool](t, ctx, `document.getElementById('key-offer').hidden`))
	require.True(t, eval[bool](t, ctx, `document.getElementById('key-error').hidden`), "the models were not listed with the other key")
	require.Equal(t, 1, eval[int](t, ctx, `performance.getEntriesByName(location.origin + '/v1/models').length`))

	// A page loaded with another key asks first, showing only the key's
	// end; kept, nothing changes.
	open(t, ctx, e, "sk-demo-unknown")
	require.False(t, eval[bool](t, ctx, `document.getElementById('key-offer').hidden`))
	require.Equal(t, e.url+"/", eval[string](t, ctx, `location.href`), "the fragment left the address bar at once")
	require.Equal(t, "sk-demo", eval[string](t, ctx, stored))
	offer := text(t, ctx, "#key-offer")
	require.Contains(t, offer, "nown")
	require.NotContains(t, offer, "sk-demo-unknown")
	do(t, ctx, chromedp.Click(chromedp.CSS("#key-offer-keep")))
	require.True(t, eval[bool](t, ctx, `document.getElementById('key-offer').hidden`))
	require.Equal(t, "sk-demo", eval[string](t, ctx, stored))
	require.True(t, eval[bool](t, ctx, `document.getElementById('key-error').hidden`))

	// Used, the page lists the new key's models (a key the gateway does
	// not know: 401).
	open(t, ctx, e, "sk-demo-unknown")
	do(t, ctx, chromedp.Click(chromedp.CSS("#key-offer-use")))
	wait(t, ctx, `!document.getElementById('key-error').hidden`)
	require.Equal(t, "sk-demo-unknown", eval[string](t, ctx, stored))
	require.Equal(t, "sk-demo-unknown", eval[string](t, ctx, `document.getElementById('key-input').value`))
	require.True(t, eval[bool](t, ctx, `document.getElementById('key-offer').hidden`))
	require.Contains(t, text(t, ctx, "#key-error"), "invalid_api_key")

	// The key already set: nothing to ask.
	open(t, ctx, e, "sk-demo-unknown")
	require.True(t, eval[bool](t, ctx, `document.getElementById('key-offer').hidden`))
}

// longPrompt makes the test's chat backend answer with a reply of
// longReplyChunks pieces of a thousand characters, without a space.
const (
	longPrompt      = "[long]"
	longReplyChunks = 300
)

// TestBrowserLongRepliesAreAppended: a streamed reply grows by its
// pieces, one text node appended to (not the whole text set again for
// each piece), and a word longer than the page breaks instead of
// widening it.
func TestBrowserLongRepliesAreAppended(t *testing.T) {
	t.Parallel()
	_, ctx := openTab(t, console.Config{}, "sk-demo", "chat")
	// Count the replacements of a reply's text: each is a relayout of the
	// whole text.
	observe := func(log string) {
		t.Helper()
		eval[bool](t, ctx, `(() => {
			window.replaced = 0;
			window.pieces = 0;
			new MutationObserver((ms) => {
				for (const m of ms) {
					const text = m.target.nodeType === Node.TEXT_NODE ? m.target.parentElement : m.target;
					if (!text.matches('.msg.assistant .text, .msg.assistant .reasoning-text')) continue;
					if (m.type === 'characterData') window.pieces++;
					if (m.type === 'childList' && m.removedNodes.length) window.replaced++;
				}
			}).observe(document.getElementById('`+log+`'), {subtree: true, childList: true, characterData: true});
			return true;
		})()`)
	}
	observe("chat-log")
	do(t, ctx,
		chromedp.SetValue(chromedp.CSS("#chat-model"), demo.ChatModel),
		chromedp.SendKeys(chromedp.CSS("#chat-input"), longPrompt),
		chromedp.Click(chromedp.CSS("#chat-send")))
	wait(t, ctx, `document.querySelector('#chat-log .msg.assistant .meta').textContent !== ''`)
	require.Equal(t, "finish reason: stop", text(t, ctx, "#chat-log .msg.assistant .meta"))
	reply := `document.querySelector('#chat-log .msg.assistant .text')`
	require.Equal(t, longReplyChunks*1000, eval[int](t, ctx, reply+`.textContent.length`))
	require.Equal(t, 1, eval[int](t, ctx, reply+`.childNodes.length`), "one text node")
	require.Zero(t, eval[int](t, ctx, `window.replaced`), "no piece replaced the text")
	require.Equal(t, longReplyChunks-1, eval[int](t, ctx, `window.pieces`), "each piece after the first was appended")
	// The word breaks within the page.
	require.Equal(t, "break-word", eval[string](t, ctx, `getComputedStyle(`+reply+`).overflowWrap`))
	require.LessOrEqual(t, eval[int](t, ctx, `document.getElementById('chat-log').scrollWidth`), eval[int](t, ctx, `document.getElementById('chat-log').clientWidth`))
	require.LessOrEqual(t, eval[int](t, ctx, `document.documentElement.scrollWidth`), 1280)

	// Conversations append their deltas in the same way.
	tab(t, ctx, "conv")
	observe("conv-log")
	do(t, ctx, chromedp.SetValue(chromedp.CSS("#conv-model"), demo.ChatModel),
		chromedp.SendKeys(chromedp.CSS("#conv-input"), "Tell me a long story"),
		chromedp.Click(chromedp.CSS("#conv-send")))
	wait(t, ctx, `document.querySelector('#conv-log .msg.assistant') && !document.querySelector('#conv-log [aria-busy]')`)
	require.NotEmpty(t, text(t, ctx, "#conv-log .msg.assistant .text"))
	require.Equal(t, 1, eval[int](t, ctx, `document.querySelector('#conv-log .msg.assistant .text').childNodes.length`))
	require.Zero(t, eval[int](t, ctx, `window.replaced`))
	require.Positive(t, eval[int](t, ctx, `window.pieces`))
}

// TestBrowserForgottenKeyReadsNoContentFromTheCache: once the key is
// forgotten, the video it fetched is not served again from the
// browser's cache to a request without a key.
func TestBrowserForgottenKeyReadsNoContentFromTheCache(t *testing.T) {
	t.Parallel()
	_, ctx := openTab(t, console.Config{}, "sk-demo", "video")
	do(t, ctx,
		chromedp.SetValue(chromedp.CSS("#video-model"), demo.VideoModelGeneral),
		chromedp.SetValue(chromedp.CSS("#video-seconds"), "4"),
		chromedp.SetValue(chromedp.CSS("#video-size"), "1280x720"),
		chromedp.SetValue(chromedp.CSS("#video-prompt"), "A kite"),
		chromedp.Click(chromedp.CSS("#video-create")))
	wait(t, ctx, videoLoaded)
	id := text(t, ctx, "#video-task-id")
	status := func(query string) int {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch('/v1/videos/`+id+`/content`+query+`').then(r => r.status)`, chromedp.EvalAwaitPromise))
		require.NoError(t, err)
		return v
	}

	tab(t, ctx, "key")
	do(t, ctx, chromedp.Click(chromedp.CSS("#key-forget")))
	wait(t, ctx, `document.getElementById('models-table').hidden`)
	require.Equal(t, http.StatusUnauthorized, status(""))
	require.Equal(t, http.StatusUnauthorized, status("?variant=thumbnail"))
	require.True(t, eval[bool](t, ctx, `!document.getElementById('video-player').getAttribute('src')`), "the video left the page")
}

// Hostile names and texts: each would run script on the console's page
// if the page ever took text for HTML, calling back to the gateway's
// origin (which the console's policy lets a page fetch) with the tab's
// API key.
const (
	stealScript  = `window.pwned=1;fetch('/steal?k='+sessionStorage.getItem('gatewaykit.key')+'&a='+sessionStorage.getItem('gatewaykit.adminKey'))`
	hostileImg   = `<img src=x onerror="` + stealScript + `">`
	hostileChat  = `chat` + hostileImg
	hostileVideo = `video<script>` + stealScript + `</script>`
	hostileText  = `Hello <script>` + stealScript + `</script>` + hostileImg + `<a href="javascript:` + stealScript + `">link</a>`
	hostilePage  = `<!doctype html><title>video</title><script>` + stealScript + `</script>`
	hostileSVG   = `<svg xmlns="http://www.w3.org/2000/svg" onload="` + stealScript + `"><script>` + stealScript + `</script></svg>`
)

// hostileEnv is a gateway whose two models (with script in their ids)
// are relayed to an upstream that puts script in everything it answers:
// the streamed text and reasoning of the chat model, and the content of
// the video model, answered as text/html and its thumbnail as
// image/svg+xml. Every request to /steal (or /x, where the images point)
// on the gateway's origin is recorded, and so is every request the
// upstream gets.
type hostileEnv struct {
	url    string
	mu     sync.Mutex
	stolen []string
	asked  []string // the upstream's requests, headers and bodies
}

func (h *hostileEnv) steals() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.stolen...)
}

func newHostileEnv(t *testing.T) *hostileEnv {
	t.Helper()
	h := &hostileEnv{}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var head strings.Builder
		_ = r.Header.Write(&head)
		h.mu.Lock()
		h.asked = append(h.asked, r.Method+" "+r.URL.String()+"\n"+head.String()+"\n"+string(body))
		h.mu.Unlock()
		writeJSON := func(v any) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(v)
		}
		task := map[string]any{"id": "video_evil", "object": "video", "model": "up-video", "progress": 100, "created_at": 1, "seconds": "4", "size": "1280x720"}
		switch r.Method + " " + r.URL.Path {
		case "POST /v1/chat/completions":
			w.Header().Set("Content-Type", "text/event-stream")
			chunk := func(delta map[string]any, finish any) {
				b, _ := json.Marshal(map[string]any{"id": "chatcmpl-evil", "object": "chat.completion.chunk", "created": 1, "model": "up-chat",
					"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}})
				fmt.Fprintf(w, "data: %s\n\n", b)
			}
			chunk(map[string]any{"role": "assistant", "reasoning_content": hostileText}, nil)
			for _, piece := range strings.SplitAfter(hostileText, ">") {
				chunk(map[string]any{"content": piece}, nil)
			}
			chunk(map[string]any{}, "stop")
			fmt.Fprint(w, `data: {"id":"chatcmpl-evil","object":"chat.completion.chunk","created":1,"model":"up-chat","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":9,"total_tokens":12}}`+"\n\ndata: [DONE]\n\n")
		case "POST /v1/videos":
			task["status"], task["progress"] = "queued", 0
			writeJSON(task)
		case "GET /v1/videos/video_evil":
			task["status"] = "completed"
			writeJSON(task)
		case "GET /v1/videos/video_evil/content":
			if r.URL.Query().Get("variant") == "thumbnail" {
				w.Header().Set("Content-Type", "image/svg+xml")
				io.WriteString(w, hostileSVG)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, hostilePage)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(up.Close)

	r, err := relay.New([]relay.Route{
		{Model: hostileChat, Upstreams: []relay.Upstream{{BaseURL: up.URL + "/v1", Key: "sk-upstream-evil", Model: "up-chat"}}},
		{Model: hostileVideo, Upstreams: []relay.Upstream{{BaseURL: up.URL + "/v1", Key: "sk-upstream-evil", Model: "up-video"}}},
	}, relay.WithPollInterval(10*time.Millisecond))
	require.NoError(t, err)
	keys, err := gateway.NewKeyStore(context.Background(), gateway.DemoKeys())
	require.NoError(t, err)
	g, err := gateway.New(gateway.Config{
		Keys: keys,
		Catalog: models.NewMemoryCatalog(
			models.Model{ID: hostileChat, OwnedBy: hostileImg, Created: 1, EndpointTypes: []models.EndpointType{models.Compat}},
			models.Model{ID: hostileVideo, OwnedBy: hostileImg, Created: 1, EndpointTypes: []models.EndpointType{models.CompatVideo}}),
		Relay: r,
	})
	require.NoError(t, err)
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { g.Run(rctx); close(done) }()

	mux := http.NewServeMux()
	console.Register(mux, console.NewHandler(console.Config{}))
	steal := func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.stolen = append(h.stolen, r.URL.String())
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}
	mux.HandleFunc("/steal", steal)
	mux.HandleFunc("/x", steal)
	mux.Handle("/", g)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
	})
	h.url = srv.URL
	return h
}

// TestBrowserHostileUpstreamRunsNothing: the texts, model ids and video
// content of a hostile upstream are shown as text or not at all: no
// script of theirs runs, on the console's page or as a page of the
// gateway's origin, and no key leaves.
func TestBrowserHostileUpstreamRunsNothing(t *testing.T) {
	t.Parallel()
	h := newHostileEnv(t)
	ctx := newTab(t)
	open(t, ctx, &testEnv{url: h.url}, "sk-demo")
	eval[bool](t, ctx, `sessionStorage.setItem('gatewaykit.adminKey', 'sk-admin-secret'), true`)
	// Record the types of the object URLs the page makes.
	eval[bool](t, ctx, `(() => {
		window.objectTypes = [];
		const make = URL.createObjectURL;
		URL.createObjectURL = (b) => { window.objectTypes.push(b.type); return make(b); };
		return true;
	})()`)
	nothingRan := func() {
		t.Helper()
		require.True(t, eval[bool](t, ctx, `window.pwned === undefined`), "a hostile script ran")
		require.Empty(t, h.steals(), "a hostile script called back")
		require.Zero(t, eval[int](t, ctx, `document.querySelectorAll('main script, main img:not(#video-thumb), main a[href^="javascript"], main svg:not(.chart svg)').length`),
			"markup of the upstream's")
	}

	// The model ids are text.
	ids := eval[[]string](t, ctx, `[...document.querySelectorAll('#models-table tbody tr')].map(r => r.dataset.model)`)
	require.ElementsMatch(t, []string{hostileChat, hostileVideo}, ids)
	require.Contains(t, text(t, ctx, "#models-table"), hostileImg)
	nothingRan()

	// The chat's reply and reasoning are text.
	tab(t, ctx, "chat")
	model, err := json.Marshal(hostileChat)
	require.NoError(t, err)
	eval[bool](t, ctx, `document.getElementById('chat-model').value = `+string(model)+`, true`)
	do(t, ctx, chromedp.SendKeys(chromedp.CSS("#chat-input"), "hi"), chromedp.Click(chromedp.CSS("#chat-send")))
	wait(t, ctx, `document.getElementById('chat-usage').textContent !== ''`)
	require.Equal(t, hostileText, text(t, ctx, "#chat-log .msg.assistant .text"))
	require.Equal(t, hostileText, text(t, ctx, "#chat-log .msg.assistant .reasoning-text"))
	require.Contains(t, text(t, ctx, "#chat-log .msg.assistant .who"), hostileImg)
	nothingRan()

	// The video is refused: its content is no video.
	tab(t, ctx, "video")
	model, err = json.Marshal(hostileVideo)
	require.NoError(t, err)
	eval[bool](t, ctx, `document.getElementById('video-model').value = `+string(model)+`, true`)
	do(t, ctx,
		chromedp.SetValue(chromedp.CSS("#video-seconds"), "4"),
		chromedp.SetValue(chromedp.CSS("#video-size"), "1280x720"),
		chromedp.SetValue(chromedp.CSS("#video-prompt"), "anything"),
		chromedp.Click(chromedp.CSS("#video-create")))
	wait(t, ctx, `!document.getElementById('video-error').hidden`)
	require.Contains(t, text(t, ctx, "#video-error"), "application/octet-stream")
	id := text(t, ctx, "#video-task-id")
	require.True(t, strings.HasPrefix(id, "task_"), id)
	require.True(t, eval[bool](t, ctx, `!document.getElementById('video-player').getAttribute('src') && !document.getElementById('video-thumb').getAttribute('src')`))
	require.Empty(t, eval[[]string](t, ctx, `window.objectTypes`), "no object URL of the upstream's content")
	wait(t, ctx, `document.querySelector('#video-table tr[data-task="`+id+`"]')`)
	require.Contains(t, text(t, ctx, `#video-table tr[data-task="`+id+`"]`), hostileVideo)
	// Download refuses it too.
	eval[bool](t, ctx, `document.getElementById('video-error').hidden = true`)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#video-table tr[data-task="`+id+`"] button[aria-label="Download `+id+`"]`)))
	wait(t, ctx, `!document.getElementById('video-error').hidden`)
	require.Contains(t, text(t, ctx, "#video-error"), "does not open")
	require.Empty(t, eval[[]string](t, ctx, `window.objectTypes`))
	nothingRan()

	// Opened as a page of the gateway's origin (the content URL with the
	// key in the query, in the tab that holds the keys), the content is
	// a download, not a page.
	dir := t.TempDir()
	requireDownload(t, ctx, dir)
	for _, tc := range []struct{ query, file string }{
		{"?key=sk-demo", id + ".bin"},
		{"?variant=thumbnail&key=sk-demo", id + "_thumbnail.bin"},
	} {
		eval[bool](t, ctx, `location.href = '/v1/videos/`+id+`/content`+tc.query+`', true`)
		for {
			if _, err := os.Stat(filepath.Join(dir, tc.file)); err == nil {
				break
			}
			require.Empty(t, h.steals(), "the content ran as a page")
			select {
			case <-ctx.Done():
				t.Fatalf("no download of %s in %s", tc.file, dir)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	require.Equal(t, h.url+"/", eval[string](t, ctx, `location.href`), "the console stayed")
	nothingRan()

	// No key of the tab reached the upstream; the relay used its own.
	h.mu.Lock()
	defer h.mu.Unlock()
	require.NotEmpty(t, h.asked)
	for _, req := range h.asked {
		require.NotContains(t, req, "sk-demo")
		require.NotContains(t, req, "sk-admin-secret")
		require.Contains(t, req, "sk-upstream-evil")
	}
}
