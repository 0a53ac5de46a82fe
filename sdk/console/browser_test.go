package console_test

// End-to-end tests of the console in headless Chromium, driven with
// chromedp: one browser for the whole package (started by the first test
// that needs it), a tab per test, and the gateway in-process with the demo
// backends, as examples/server assembles it.
//
// When no browser is found the tests skip, unless GATEWAYKIT_BROWSER_TESTS
// is set (CI sets it), in which case they fail; a browser that is found
// but does not start fails them. GATEWAYKIT_CHROMIUM names the browser's
// binary; by default chromium, chromium-browser, google-chrome and
// headless-shell are looked for on PATH.
//
// With GATEWAYKIT_CONSOLE_SCREENSHOTS=dir set, the tests also write PNG
// screenshots of the main views to dir (the README's are made with
// GATEWAYKIT_CONSOLE_SCREENSHOTS=../../docs/console).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/console"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

// theBrowser is the package's one browser, started by the first tab.
var theBrowser struct {
	once   sync.Once
	ctx    context.Context
	cancel func()
	dir    string
	err    error
	// missing is true when no browser was found; other errors fail the
	// tests even outside CI.
	missing bool
}

func TestMain(m *testing.M) {
	code := m.Run()
	if theBrowser.cancel != nil {
		theBrowser.cancel()
		removeAll(theBrowser.dir)
	}
	os.Exit(code)
}

// removeAll removes dir, trying again while the browser's children still
// write in it.
func removeAll(dir string) {
	for range 50 {
		if err := os.RemoveAll(dir); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func browserPath() string {
	if p := os.Getenv("GATEWAYKIT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func startBrowser() {
	b := &theBrowser
	path := browserPath()
	if path == "" {
		b.err = fmt.Errorf("no browser found: install Debian's chromium (apt-get install -y chromium) or set GATEWAYKIT_CHROMIUM")
		b.missing = true
		return
	}
	b.dir, b.err = os.MkdirTemp("", "gatewaykit-console-browser")
	if b.err != nil {
		return
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("autoplay-policy", "no-user-gesture-required"),
		chromedp.UserDataDir(b.dir),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancel := chromedp.NewContext(alloc)
	if err := chromedp.Do(ctx); err != nil { // starts the browser, no timeout
		cancel()
		cancelAlloc()
		b.err = fmt.Errorf("starting %s: %w", path, err)
		return
	}
	b.ctx = ctx
	b.cancel = func() { cancel(); cancelAlloc() }
}

// openTab opens the console of a new environment of cfg in a new tab,
// with key entered, on the view named tab.
func openTab(t *testing.T, cfg console.Config, key, name string) (*testEnv, context.Context) {
	t.Helper()
	e := newEnv(t, cfg)
	ctx := newTab(t)
	open(t, ctx, e, key)
	tab(t, ctx, name)
	return e, ctx
}

// newTab opens a tab of the package's browser, closed when t ends. The
// whole test is bounded (2 minutes) so that a hung page fails instead of
// hanging; no assertion depends on timing.
func newTab(t *testing.T) context.Context {
	t.Helper()
	theBrowser.once.Do(startBrowser)
	if err := theBrowser.err; err != nil {
		if !theBrowser.missing || os.Getenv("GATEWAYKIT_BROWSER_TESTS") != "" {
			t.Fatalf("the browser tests cannot run: %v", err)
		}
		t.Skipf("skipping the browser tests: %v (set GATEWAYKIT_BROWSER_TESTS=1 to make this a failure)", err)
	}
	ctx, cancel := context.WithTimeout(theBrowser.ctx, 2*time.Minute)
	ctx, cancelTab := chromedp.NewContext(ctx)
	t.Cleanup(func() { cancelTab(); cancel() })
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)))

	// The page must throw nothing, log no error of its own and break no
	// rule of its Content-Security-Policy. (The browser logs each error
	// reply, which the tests provoke, as a network error: those are fine.)
	var mu sync.Mutex
	var bad []string
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.IsException() || m.Source == "security" || (m.Type == "error" && m.Source != "network") {
				mu.Lock()
				bad = append(bad, m.String())
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range bad {
			t.Errorf("the page's console: %s", m)
		}
	})
	return ctx
}

// stallPrompt makes the test's chat backend send one delta, then wait for
// the client to go away, which it reports on stalled.
const stallPrompt = "[stall]"

type stallingChat struct {
	chat.StreamingBackend
	stalled chan struct{} // closed when a stalled stream's context ends
	once    sync.Once
}

func (s *stallingChat) Stream(ctx context.Context, p *chat.Params) iter.Seq2[chat.Delta, error] {
	raw, _ := json.Marshal(p.Request.Messages)
	if strings.Contains(string(raw), longPrompt) {
		return func(yield func(chat.Delta, error) bool) {
			piece := strings.Repeat("x", 1000)
			for range longReplyChunks {
				if !yield(chat.Delta{Content: piece}, nil) {
					return
				}
			}
			yield(chat.Delta{FinishReason: chat.FinishStop}, nil)
		}
	}
	if !strings.Contains(string(raw), stallPrompt) {
		return s.StreamingBackend.Stream(ctx, p)
	}
	return func(yield func(chat.Delta, error) bool) {
		if !yield(chat.Delta{Content: "first words"}, nil) {
			return
		}
		<-ctx.Done()
		s.once.Do(func() { close(s.stalled) })
	}
}

type testEnv struct {
	url     string
	stalled chan struct{}
	// release, once closed, lets the background responses that the test
	// backend holds run on (see holdingResponses).
	release chan struct{}
	// drop closes every connection of the browser to the gateway, as a
	// network that drops them would.
	drop func()
}

// newEnv starts the gateway with the demo backends and the demo keys, and
// the console in front of it as examples/server mounts it.
func newEnv(t *testing.T, c console.Config) *testEnv {
	t.Helper()
	ctx := context.Background()
	keys := auth.NewMemoryKeyStore()
	require.NoError(t, gateway.PutKeys(ctx, keys, gateway.DemoKeys()))
	text := demo.NewTextBackend(demo.WithChunkDelay(15 * time.Millisecond))
	stall := &stallingChat{StreamingBackend: text.Chat(), stalled: make(chan struct{})}
	held := &holdingResponses{ResponsesBackend: text.Responses(), release: make(chan struct{})}
	ms := append(demo.TextModels(), demo.VideoModels()...)
	g, err := gateway.New(gateway.Config{
		Keys:          keys,
		Catalog:       models.NewMemoryCatalog(ms...),
		Chat:          stall,
		Completions:   text.Completions(),
		Responses:     held,
		Videos:        demo.NewVideoGenerator(demo.WithVideoDuration(1500 * time.Millisecond)),
		RunnerOptions: []runner.Option{},
	})
	require.NoError(t, err)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { g.Run(rctx); close(done) }()
	mux := http.NewServeMux()
	console.Register(mux, console.NewHandler(c))
	mux.Handle("/", g)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-done
	})
	return &testEnv{url: srv.URL, stalled: stall.stalled, release: held.release, drop: srv.CloseClientConnections}
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

// wait waits until the JavaScript expression js is true.
func wait(t *testing.T, ctx context.Context, js string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+js+")", chromedp.WithPollingTimeout(0)))
	require.NoError(t, err, "waiting for %s", js)
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	require.NoError(t, err, js)
	return v
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return eval[string](t, ctx, fmt.Sprintf(`document.querySelector(%q).textContent`, sel))
}

// open loads the console with key in the #key= fragment (none if empty)
// and waits until it has loaded its models.
func open(t *testing.T, ctx context.Context, e *testEnv, key string) {
	t.Helper()
	u := e.url + "/"
	if key != "" {
		u += "#key=" + key
	}
	// about:blank first, so that this is a load and not a change of the
	// fragment; a query (not a poll, which a navigation can outrun) waits
	// for the page to have loaded its models.
	do(t, ctx, chromedp.Navigate("about:blank"), chromedp.Navigate(u),
		chromedp.WaitReady(chromedp.CSS(`body[data-ready="true"]`)))
}

func tab(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	do(t, ctx, chromedp.Click(chromedp.CSS("#tab-"+name)))
	wait(t, ctx, fmt.Sprintf(`!document.getElementById('view-%s').hidden`, name))
}

// screenshot writes the page to $GATEWAYKIT_CONSOLE_SCREENSHOTS/name.png,
// when that is set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("GATEWAYKIT_CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644))
}

func TestBrowserKeyFragmentListsTheKeysModels(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	ctx := newTab(t)
	open(t, ctx, e, "sk-demo")

	ids := eval[[]string](t, ctx, `[...document.querySelectorAll('#models-table tbody tr')].map(r => r.dataset.model)`)
	require.Equal(t, []string{demo.ChatModel, demo.ReasonerModel, demo.InstructModel, demo.VideoModelGeneral, demo.VideoModelMultimodal}, ids)
	require.Equal(t, "compat, compat-response", text(t, ctx, `#models-table tr[data-model="demo-chat"] td:nth-child(2)`))
	require.Contains(t, text(t, ctx, `#models-table tr[data-model="demo-reasoner"] td:nth-child(3)`), "reasoning")
	require.Contains(t, text(t, ctx, `#models-table tr[data-model="demo-video"] td:nth-child(3)`), "seconds 4, 8, 12, 16, 20")

	// The key went to sessionStorage, and the fragment left the address bar.
	require.Equal(t, "sk-demo", eval[string](t, ctx, `sessionStorage.getItem('gatewaykit.key')`))
	require.Equal(t, e.url+"/", eval[string](t, ctx, `location.href`))
	require.Empty(t, eval[string](t, ctx, `document.cookie`))
	// It survives a reload of the tab.
	open(t, ctx, e, "")
	require.Equal(t, "sk-demo", eval[string](t, ctx, `document.getElementById('key-input').value`))
	wait(t, ctx, `document.querySelectorAll('#models-table tbody tr').length === 5`)
	screenshot(t, ctx, "models")

	// Forget: the key leaves sessionStorage, and its models the page.
	do(t, ctx, chromedp.Click(chromedp.CSS("#key-forget")))
	wait(t, ctx, `document.getElementById('models-table').hidden`)
	require.Nil(t, eval[*string](t, ctx, `sessionStorage.getItem('gatewaykit.key')`))
	require.Equal(t, "No API key", text(t, ctx, "#key-badge"))
	require.Zero(t, eval[int](t, ctx, `document.getElementById('chat-model').options.length`))
}

func TestBrowserBadKeyShowsThe401AsTheAPIWordsIt(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	ctx := newTab(t)
	open(t, ctx, e, "")
	do(t, ctx,
		chromedp.SendKeys(chromedp.CSS("#key-input"), "sk-not-a-real-key"),
		chromedp.Click(chromedp.CSS(`#key-form button[type=submit]`)))
	wait(t, ctx, `!document.getElementById('key-error').hidden`)

	// The page shows the status, the code and the API's own message.
	req, err := http.NewRequest("GET", e.url+"/v1/models", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-not-a-real-key")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
	var body struct {
		Error struct{ Message, Code string }
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
	require.Equal(t, "401 "+body.Error.Code+": "+body.Error.Message, text(t, ctx, "#key-error"))
	require.Equal(t, "invalid_api_key", body.Error.Code)
	require.Equal(t, "Key refused", text(t, ctx, "#key-badge"))
	require.Equal(t, "alert", eval[string](t, ctx, `document.getElementById('key-error').getAttribute('role')`))
}

func TestBrowserChatStreamsTokenByToken(t *testing.T) {
	t.Parallel()
	_, ctx := openTab(t, console.Config{}, "sk-demo", "chat")
	// Record every length the reply's text takes, as the DOM changes.
	eval[bool](t, ctx, `(() => {
		window.lengths = [];
		new MutationObserver(() => {
			const r = document.querySelector('#chat-log .msg.assistant:last-child .text');
			if (r) window.lengths.push(r.textContent.length);
		}).observe(document.getElementById('chat-log'), {subtree: true, childList: true, characterData: true});
		return true;
	})()`)
	do(t, ctx,
		chromedp.SetValue(chromedp.CSS("#chat-model"), demo.ChatModel),
		chromedp.SendKeys(chromedp.CSS("#chat-input"), "Hello there, console"),
		chromedp.Click(chromedp.CSS("#chat-send")))
	wait(t, ctx, `document.getElementById('chat-usage').textContent !== ''`)
	wait(t, ctx, `!document.getElementById('chat-send').disabled`)

	reply := text(t, ctx, "#chat-log .msg.assistant .text")
	require.Contains(t, reply, "counting to twenty")
	var grew []int
	for _, n := range eval[[]int](t, ctx, `window.lengths`) {
		if n > 0 && (len(grew) == 0 || n > grew[len(grew)-1]) {
			grew = append(grew, n)
		}
	}
	require.Greater(t, len(grew), 5, "the reply grew in steps: %v", grew)
	require.Equal(t, len([]rune(reply)), grew[len(grew)-1])
	require.Regexp(t, `^Usage: \d+ prompt \+ \d+ completion = \d+ tokens$`, text(t, ctx, "#chat-usage"))
	require.Equal(t, "finish reason: stop", text(t, ctx, "#chat-log .msg.assistant .meta"))
	require.True(t, eval[bool](t, ctx, `document.querySelector('#chat-log .msg.assistant .reasoning').hidden`), "no reasoning from a chat model")

	var prompt1, completion1, total1 int
	_, err := fmt.Sscanf(text(t, ctx, "#chat-usage"), "Usage: %d prompt + %d completion = %d tokens", &prompt1, &completion1, &total1)
	require.NoError(t, err)

	// A second message carries the history (its prompt counts the first
	// exchange), and gets a second reply.
	do(t, ctx, chromedp.SendKeys(chromedp.CSS("#chat-input"), "And again"), chromedp.Click(chromedp.CSS("#chat-send")))
	wait(t, ctx, `document.querySelectorAll('#chat-log .msg.assistant .meta').length === 2 && document.querySelectorAll('#chat-log .msg.assistant .meta')[1].textContent !== ''`)
	require.Equal(t, 4, eval[int](t, ctx, `document.querySelectorAll('#chat-log .msg').length`))
	var prompt2 int
	_, err = fmt.Sscanf(text(t, ctx, "#chat-usage"), "Usage: %d prompt", &prompt2)
	require.NoError(t, err)
	require.Greater(t, prompt2, prompt1+completion1, "the first exchange is in the second prompt")
	screenshot(t, ctx, "chat")
}

func TestBrowserChatShowsReasoningApart(t *testing.T) {
	t.Parallel()
	_, ctx := openTab(t, console.Config{}, "sk-demo", "chat")
	do(t, ctx,
		chromedp.SetValue(chromedp.CSS("#chat-model"), demo.ReasonerModel),
		chromedp.SendKeys(chromedp.CSS("#chat-input"), "Why is the sky blue?"),
		chromedp.Click(chromedp.CSS("#chat-send")))
	wait(t, ctx, `document.getElementById('chat-usage').textContent !== ''`)
	require.False(t, eval[bool](t, ctx, `document.querySelector('#chat-log .msg.assistant .reasoning').hidden`))
	reasoning := text(t, ctx, "#chat-log .msg.assistant .reasoning-text")
	reply := text(t, ctx, "#chat-log .msg.assistant .text")
	require.NotEmpty(t, reasoning)
	require.NotEmpty(t, reply)
	require.NotContains(t, reply, reasoning)
	require.Contains(t, text(t, ctx, "#chat-usage"), "reasoning)")
	screenshot(t, ctx, "chat-reasoning")
}

func TestBrowserChatStopAbortsTheStream(t *testing.T) {
	t.Parallel()
	e, ctx := openTab(t, console.Config{}, "sk-demo", "chat")
	do(t, ctx,
		chromedp.SendKeys(chromedp.CSS("#chat-input"), stallPrompt+" wait for me"),
		chromedp.Click(chromedp.CSS("#chat-send")))
	wait(t, ctx, `document.querySelector('#chat-log .msg.assistant .text').textContent === 'first words'`)
	require.False(t, eval[bool](t, ctx, `document.getElementById('chat-stop').disabled`))
	do(t, ctx, chromedp.Click(chromedp.CSS("#chat-stop")))
	wait(t, ctx, `document.querySelector('#chat-log .msg.assistant .meta').textContent === 'Stopped.'`)
	select {
	case <-e.stalled: // the gateway saw the client go: the backend's context ended
	case <-ctx.Done():
		t.Fatal("the stream's context never ended after Stop")
	}
	require.Equal(t, "first words", text(t, ctx, "#chat-log .msg.assistant .text"))
	require.True(t, eval[bool](t, ctx, `document.getElementById('chat-error').hidden`), "a stop is not an error")
}

func TestBrowserErrorsAreShownAsTheAPIWordsThem(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	// Each key in a tab of its own: a page does not replace the key of
	// its tab without asking.
	ctx := newTab(t)

	// A key without quota still lists its models (reading spends
	// nothing), and its chat is refused with 403.
	open(t, ctx, e, "sk-demo-empty")
	require.True(t, eval[bool](t, ctx, `document.getElementById('key-error').hidden`), "the model list is open to a spent key")
	tab(t, ctx, "chat")
	do(t, ctx,
		chromedp.SetValue(chromedp.CSS("#chat-model"), demo.ChatModel),
		chromedp.SendKeys(chromedp.CSS("#chat-input"), "Hello"),
		chromedp.Click(chromedp.CSS("#chat-send")))
	wait(t, ctx, `!document.getElementById('chat-error').hidden`)
	require.Equal(t, "403 insufficient_quota: You exceeded the quota of this API key. Please check your plan and billing details.",
		text(t, ctx, "#chat-error"))

	// A rate-limited key (5 requests a minute): the sixth list is a 429.
	ctx = newTab(t)
	open(t, ctx, e, "sk-demo-limited")
	for n := 2; n <= 6; n++ { // one list at a time, in order
		do(t, ctx, chromedp.Click(chromedp.CSS(`#key-form button[type=submit]`)))
		wait(t, ctx, fmt.Sprintf(`performance.getEntriesByName(location.origin + '/v1/models').length === %d`, n))
	}
	wait(t, ctx, `!document.getElementById('key-error').hidden`)
	require.Regexp(t, `^429 rate_limit_exceeded: .+`, text(t, ctx, "#key-error"))

	// A chat request refused before the stream: the 404 of an unknown
	// model.
	ctx = newTab(t)
	open(t, ctx, e, "sk-demo")
	tab(t, ctx, "chat")
	eval[bool](t, ctx, `document.getElementById('chat-model').add(new Option('no-such-model', 'no-such-model')), true`)
	do(t, ctx,
		chromedp.SetValue(chromedp.CSS("#chat-model"), "no-such-model"),
		chromedp.SendKeys(chromedp.CSS("#chat-input"), "Hello"),
		chromedp.Click(chromedp.CSS("#chat-send")))
	wait(t, ctx, `!document.getElementById('chat-error').hidden`)
	require.Equal(t, `404 model_not_found: The model "no-such-model" does not exist or you do not have access to it.`, text(t, ctx, "#chat-error"))

	// A failure after the first chunk arrives as an error in the stream.
	do(t, ctx,
		chromedp.SetValue(chromedp.CSS("#chat-model"), demo.ChatModel),
		chromedp.SendKeys(chromedp.CSS("#chat-input"), demo.DirectiveFail),
		chromedp.Click(chromedp.CSS("#chat-send")))
	wait(t, ctx, `document.querySelectorAll('#chat-log .msg.assistant.failed').length === 2`)
	require.Contains(t, text(t, ctx, "#chat-error"), "simulated upstream failure")
}

func TestBrowserConversationContinuesWithPreviousResponseID(t *testing.T) {
	t.Parallel()
	e, ctx := openTab(t, console.Config{}, "sk-demo", "conv")
	ids := `[...document.querySelectorAll('#conv-log [data-response-id]')].map(e => e.dataset.responseId)`
	send := func(msg string) {
		t.Helper()
		do(t, ctx,
			chromedp.SendKeys(chromedp.CSS("#conv-input"), msg),
			chromedp.Click(chromedp.CSS("#conv-send")))
		// The turn is marked busy at once, until its stream ends.
		wait(t, ctx, `!document.querySelector('#conv-log [aria-busy]')`)
	}
	do(t, ctx, chromedp.SetValue(chromedp.CSS("#conv-model"), demo.ChatModel))
	send("My name is Ada.")
	first := eval[[]string](t, ctx, ids)[0]
	require.True(t, strings.HasPrefix(first, "resp_"), first)
	require.Equal(t, first, text(t, ctx, "#conv-previous"))
	require.Contains(t, text(t, ctx, `#conv-log [data-response-id="`+first+`"] .text`), `You said: "My name is Ada."`)
	require.Equal(t, "starts the conversation", text(t, ctx, `#conv-log [data-response-id="`+first+`"] .meta`))

	send("What is my name?")
	got := eval[[]string](t, ctx, ids)
	require.Len(t, got, 2)
	require.NotEqual(t, first, got[1])
	second := `#conv-log [data-response-id="` + got[1] + `"]`
	require.Equal(t, "continues "+first, text(t, ctx, second+" .meta"))
	require.Equal(t, got[1], text(t, ctx, "#conv-previous"))
	require.Contains(t, text(t, ctx, second+" .who"), got[1], "the id is shown")
	require.Contains(t, text(t, ctx, second+" .text"), `Earlier you said: "My name is Ada."`, "the gateway kept the history")
	require.Regexp(t, `^Usage: \d+ input \+ \d+ output = \d+ tokens$`, text(t, ctx, "#conv-usage"))

	// The gateway stored the chain: the second response names the first.
	req, err := http.NewRequest("GET", e.url+"/v1/responses/"+got[1], nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var stored struct {
		PreviousResponseID string `json:"previous_response_id"`
	}
	require.NoError(t, json.NewDecoder(res.Body).Decode(&stored))
	require.Equal(t, first, stored.PreviousResponseID)
	screenshot(t, ctx, "conversations")

	// A failed turn shows the API's error, and the next turn continues
	// from the last good one.
	send(demo.DirectiveFail + " now")
	require.Equal(t, "bad_gateway: demo: simulated upstream failure ("+demo.DirectiveFail+")", text(t, ctx, "#conv-error"))
	require.Equal(t, got[1], text(t, ctx, "#conv-previous"))

	// A reasoning model's reasoning is shown apart.
	do(t, ctx, chromedp.Click(chromedp.CSS("#conv-new")), chromedp.SetValue(chromedp.CSS("#conv-model"), demo.ReasonerModel))
	send("Think about it.")
	require.False(t, eval[bool](t, ctx, `document.querySelector('#conv-log .msg.assistant .reasoning').hidden`))
	require.NotEmpty(t, text(t, ctx, "#conv-log .msg.assistant .reasoning-text"))
	require.NotEmpty(t, text(t, ctx, "#conv-log .msg.assistant .text"))
	require.Equal(t, "starts the conversation", text(t, ctx, "#conv-log .msg.assistant .meta"))
}

// videoLoaded is true once the player has the video's metadata and the
// thumbnail image is decoded.
const videoLoaded = `(() => {
	const v = document.getElementById('video-player'), i = document.getElementById('video-thumb');
	return !document.getElementById('video-result').hidden && v.readyState >= 1 && v.duration > 0 &&
		i.complete && i.naturalWidth > 0;
})()`

func TestBrowserVideoGeneralPathPlaysTheVideo(t *testing.T) {
	t.Parallel()
	e, ctx := openTab(t, console.Config{}, "sk-demo", "video")
	do(t, ctx, chromedp.SetValue(chromedp.CSS("#video-model"), demo.VideoModelGeneral))
	eval[bool](t, ctx, `document.getElementById('video-model').dispatchEvent(new Event('change')), true`)

	// The controls follow the model's capabilities.
	opts := func(id string) []string {
		return eval[[]string](t, ctx, `[...document.getElementById('`+id+`').options].map(o => o.value)`)
	}
	require.Equal(t, []string{"", "4", "8", "12", "16", "20"}, opts("video-seconds"))
	require.Equal(t, []string{"1280x720", "720x1280", "1792x1024", "1024x1792"}, opts("video-size"), "size is required: no default entry")
	require.Equal(t, []string{"t2v", "i2v"}, opts("video-mode"))
	require.Equal(t, []string{"", "720p"}, opts("video-resolution"))

	id := ""
	// A reference image: a data URI in JSON, a file part in multipart.
	do(t, ctx, chromedp.SetUploadFiles(chromedp.CSS("#video-reference"), []string{pngFile(t)}))
	for _, enc := range []string{"json", "multipart"} {
		eval[bool](t, ctx, `window.progress = []; new MutationObserver(() => window.progress.push(document.getElementById('video-progress').value))
			.observe(document.getElementById('video-progress'), {attributes: true}), true`)
		do(t, ctx,
			chromedp.SetValue(chromedp.CSS("#video-encoding"), enc),
			chromedp.SetValue(chromedp.CSS("#video-seconds"), "4"),
			chromedp.SetValue(chromedp.CSS("#video-size"), "1280x720"),
			chromedp.SetValue(chromedp.CSS("#video-prompt"), "A lighthouse at dusk, "+enc),
			chromedp.Click(chromedp.CSS("#video-create")))
		wait(t, ctx, `document.getElementById('video-task-id').textContent !== '`+id+`'`)
		wait(t, ctx, videoLoaded)
		id = text(t, ctx, "#video-task-id")
		require.Equal(t, "completed", text(t, ctx, "#video-status"))
		require.Contains(t, text(t, ctx, "#video-facts"), "1280x720", "the task's metadata")
		require.Equal(t, 100, eval[int](t, ctx, `document.getElementById('video-progress').value`))
		require.InDelta(t, 4, eval[float64](t, ctx, `document.getElementById('video-player').duration`), 0.5)
		require.True(t, strings.HasPrefix(eval[string](t, ctx, `document.getElementById('video-player').src`), "blob:"))
		require.True(t, strings.HasPrefix(eval[string](t, ctx, `document.getElementById('video-thumb').src`), "blob:"))
		require.Contains(t, eval[[]int](t, ctx, `window.progress`), 100)
	}
	tasks := listTasks(t, e)
	require.Len(t, tasks, 2)
	require.Equal(t, id, tasks[0].ID)
	require.Equal(t, "4", tasks[0].Seconds)
	require.Equal(t, "1280x720", tasks[0].Size)
	require.True(t, strings.HasPrefix(id, "task_"), id)
	screenshot(t, ctx, "video")

	// Both tasks are listed, newest first.
	wait(t, ctx, `document.querySelectorAll('#video-table tbody tr').length === 2 && document.querySelector('#video-table tbody tr').dataset.task === '`+id+`'`)
	require.Contains(t, text(t, ctx, `#video-table tr[data-task="`+id+`"]`), "completed")
}

func TestBrowserVideoMultimodalPathAndTaskList(t *testing.T) {
	t.Parallel()
	e, ctx := openTab(t, console.Config{}, "sk-demo", "video")
	do(t, ctx, chromedp.Click(chromedp.CSS(`input[name=video-path][value=multimodal]`)),
		chromedp.SetValue(chromedp.CSS("#video-model"), demo.VideoModelMultimodal))
	eval[bool](t, ctx, `document.getElementById('video-model').dispatchEvent(new Event('change')), true`)
	require.True(t, eval[bool](t, ctx, `document.getElementById('video-general').hidden && !document.getElementById('video-multimodal').hidden`))
	modes := eval[[]string](t, ctx, `[...document.getElementById('video-mode').options].map(o => o.value)`)
	require.Equal(t, []string{"t2v", "i2v", "first_frame", "first_last_frame", "ref_image", "video_extend", "video_edit"}, modes, "a model with no list enables every mode")

	// The asset fields follow the mode.
	setMode := func(m string) {
		do(t, ctx, chromedp.SetValue(chromedp.CSS("#video-mode"), m))
		eval[bool](t, ctx, `document.getElementById('video-mode').dispatchEvent(new Event('change')), true`)
	}
	roles := `[...document.querySelectorAll('#video-assets input[type=url], #video-assets textarea')].map(e => e.dataset.role)`
	setMode("first_last_frame")
	require.Equal(t, []string{"first_frame", "last_frame"}, eval[[]string](t, ctx, roles))
	setMode("video_edit")
	require.Equal(t, []string{"source_video", "reference_images"}, eval[[]string](t, ctx, roles))

	// An asset the mode needs, missing: the API's 400, as it words it.
	setMode("i2v")
	do(t, ctx, chromedp.Click(chromedp.CSS("#video-create")))
	wait(t, ctx, `!document.getElementById('video-error').hidden`)
	require.Equal(t, "400 invalid_request: mode i2v needs an image asset", text(t, ctx, "#video-error"))

	// With the image as a file: sent as a data URI.
	do(t, ctx, chromedp.SetUploadFiles(chromedp.CSS("#asset-image-file"), []string{pngFile(t)}),
		chromedp.SetValue(chromedp.CSS("#video-prompt"), "The picture, moving"),
		chromedp.Click(chromedp.CSS("#video-create")))
	wait(t, ctx, `document.getElementById('video-error').hidden && !document.getElementById('video-task').hidden`)
	wait(t, ctx, videoLoaded)
	i2v := text(t, ctx, "#video-task-id")

	setMode("t2v")
	do(t, ctx,
		chromedp.SetValue(chromedp.CSS("#video-resolution"), "720p"),
		chromedp.SetValue(chromedp.CSS("#video-duration"), "4"),
		chromedp.SetValue(chromedp.CSS("#video-aspect"), "9:16"),
		chromedp.SetValue(chromedp.CSS("#video-prompt"), "A paper boat on a river"),
		chromedp.Click(chromedp.CSS("#video-create")))
	wait(t, ctx, `document.getElementById('video-task-id').textContent !== '`+i2v+`'`)
	wait(t, ctx, videoLoaded)
	require.True(t, eval[bool](t, ctx, `document.getElementById('video-error').hidden`))
	id := text(t, ctx, "#video-task-id")
	wait(t, ctx, `document.querySelector('#video-table tr[data-task="`+id+`"]')`)
	row := text(t, ctx, `#video-table tr[data-task="`+id+`"]`)
	require.Contains(t, row, "720x1280", "9:16 at 720p")
	require.Contains(t, row, demo.VideoModelMultimodal)

	// Download: the file is the task's content.
	dl := t.TempDir()
	requireDownload(t, ctx, dl)
	do(t, ctx, chromedp.Click(chromedp.CSS(`#video-table tr[data-task="`+id+`"] button[aria-label="Download `+id+`"]`)))
	want := content(t, e, id)
	file := filepath.Join(dl, id+".mp4")
	for {
		if b, err := os.ReadFile(file); err == nil && len(b) == len(want) {
			require.Equal(t, want, b)
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no download of %s in %s", id, dl)
		case <-time.After(50 * time.Millisecond):
		}
	}

	// Delete takes two presses, then the task is gone, in the list and in
	// the API.
	del := `#video-table tr[data-task="` + id + `"] button.danger`
	do(t, ctx, chromedp.Click(chromedp.CSS(del)))
	require.Equal(t, "Confirm delete", text(t, ctx, del))
	do(t, ctx, chromedp.Click(chromedp.CSS(del)))
	wait(t, ctx, `!document.querySelector('#video-table tr[data-task="`+id+`"]')`)
	req, err := http.NewRequest("GET", e.url+"/v1/videos/"+id, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode)
}

// pngFile writes a small PNG image and returns its path.
func pngFile(t *testing.T) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 16, 9))
	for x := range 16 {
		for y := range 9 {
			img.Set(x, y, color.RGBA{R: uint8(x * 16), G: 80, B: 200, A: 255})
		}
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	p := filepath.Join(t.TempDir(), "reference.png")
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
	return p
}

// listTasks lists the demo key's video tasks through the API.
func listTasks(t *testing.T, e *testEnv) []videos.Video {
	t.Helper()
	req, err := http.NewRequest("GET", e.url+"/v1/videos", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	var list videos.VideoList
	require.NoError(t, json.NewDecoder(res.Body).Decode(&list))
	return list.Data
}

func TestBrowserVideoListPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{})
	for i := range 12 {
		req, err := http.NewRequest("POST", e.url+"/v1/videos",
			strings.NewReader(fmt.Sprintf(`{"model":%q,"prompt":"clip %d","size":"720x1280","seconds":"8"}`, demo.VideoModelGeneral, i)))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer sk-demo")
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
	}
	ctx := newTab(t)
	open(t, ctx, e, "sk-demo")
	tab(t, ctx, "video")
	rows := `document.querySelectorAll('#video-table tbody tr').length`
	wait(t, ctx, rows+` === 10 && !document.getElementById('video-more').hidden`)
	do(t, ctx, chromedp.Click(chromedp.CSS("#video-more")))
	wait(t, ctx, rows+` === 12 && document.getElementById('video-more').hidden`)
	got := eval[[]string](t, ctx, `[...document.querySelectorAll('#video-table tbody tr')].map(r => r.dataset.task)`)
	var want []string
	for _, v := range listTasks(t, e) {
		want = append(want, v.ID)
	}
	require.Equal(t, want, got, "the API's order, newest first, each task once")
}

// content downloads the video of task id from the gateway.
func content(t *testing.T, e *testEnv, id string) []byte {
	t.Helper()
	req, err := http.NewRequest("GET", e.url+"/v1/videos/"+id+"/content", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer sk-demo")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return b
}

// requireDownload makes the browser save downloads in dir.
func requireDownload(t *testing.T, ctx context.Context, dir string) {
	t.Helper()
	_, err := chromedp.Run(ctx, chromedp.Action[chromedp.Void](func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
			Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir})
		return chromedp.Void{}, err
	}))
	require.NoError(t, err)
}

func TestBrowserKeyboardAndNarrowScreen(t *testing.T) {
	t.Parallel()
	e := newEnv(t, console.Config{AdminURL: "http://127.0.0.1:1"})
	ctx := newTab(t)
	open(t, ctx, e, "sk-demo")

	// The tabs answer the arrow keys, and focus is visible.
	do(t, ctx, chromedp.Focus(chromedp.CSS("#tab-key")), chromedp.KeyEvent(kb.ArrowRight))
	wait(t, ctx, `document.activeElement.id === 'tab-chat'`)
	require.Equal(t, "true", eval[string](t, ctx, `document.getElementById('tab-chat').getAttribute('aria-selected')`))
	require.False(t, eval[bool](t, ctx, `document.getElementById('view-chat').hidden`))
	require.NotEqual(t, "none", eval[string](t, ctx, `getComputedStyle(document.activeElement).outlineStyle`), "visible focus")
	do(t, ctx, chromedp.KeyEvent(kb.ArrowLeft), chromedp.KeyEvent(kb.ArrowLeft))
	wait(t, ctx, `document.activeElement.id === 'tab-admin'`)

	// Ctrl+Enter in the message box sends it.
	do(t, ctx, chromedp.Click(chromedp.CSS("#tab-chat")), chromedp.Focus(chromedp.CSS("#chat-input")))
	do(t, ctx, chromedp.KeyEvent("Hi from the keyboard"), chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierCtrl)))
	wait(t, ctx, `document.querySelector('#chat-log .msg.user .text') && document.querySelector('#chat-log .msg.user .text').textContent === 'Hi from the keyboard'`)
	wait(t, ctx, `!document.getElementById('chat-send').disabled`)

	// Every control has a label.
	unlabelled := eval[[]string](t, ctx, `[...document.querySelectorAll('input, select, textarea')]
		.filter(e => e.type !== 'hidden' && e.labels.length === 0 && !e.getAttribute('aria-label')).map(e => e.id || e.outerHTML)`)
	require.Empty(t, unlabelled)

	// On a phone-sized screen nothing is wider than the screen.
	do(t, ctx, chromedp.EmulateViewport(375, 800))
	for _, v := range []string{"key", "chat", "conv", "video", "admin"} {
		tab(t, ctx, v)
		require.LessOrEqual(t, eval[int](t, ctx, `document.documentElement.scrollWidth`), 375, "view %s fits 375px", v)
	}
	tab(t, ctx, "chat")
	screenshot(t, ctx, "narrow-chat")
}

func TestBrowserAdminKeysAndUsage(t *testing.T) {
	t.Parallel()
	fake := newFakeAdmin(t, "sk-admin")
	_, ctx := openTab(t, console.Config{AdminURL: fake.url}, "sk-demo", "admin")
	require.Equal(t, fake.url, text(t, ctx, "#admin-url"))

	// A wrong admin key: the admin API's 401, as it words it.
	do(t, ctx, chromedp.SendKeys(chromedp.CSS("#admin-key-input"), "sk-wrong"),
		chromedp.Click(chromedp.CSS(`#admin-key-form button[type=submit]`)))
	wait(t, ctx, `!document.getElementById('admin-error').hidden`)
	require.Equal(t, "401 invalid_admin_key: Incorrect admin key.", text(t, ctx, "#admin-error"))

	do(t, ctx, chromedp.SetValue(chromedp.CSS("#admin-key-input"), "sk-admin"),
		chromedp.Click(chromedp.CSS(`#admin-key-form button[type=submit]`)))
	wait(t, ctx, `document.querySelectorAll('#keys-table tbody tr').length === 1`)
	require.Contains(t, text(t, ctx, `#keys-table tr[data-key="key-demo"]`), "unlimited")
	require.True(t, eval[bool](t, ctx, `document.getElementById('keys-more').hidden`))

	// Create a key: the secret is shown once.
	do(t, ctx,
		chromedp.SendKeys(chromedp.CSS("#ak-owner"), "alice"),
		chromedp.SendKeys(chromedp.CSS("#ak-quota"), "5000"),
		chromedp.SendKeys(chromedp.CSS("#ak-rate"), "20/s"),
		chromedp.SendKeys(chromedp.CSS("#ak-models"), "demo-chat, demo-video"),
		chromedp.SendKeys(chromedp.CSS("#ak-budget"), "12.5"),
		chromedp.Click(chromedp.CSS(`#admin-create button[type=submit]`)))
	wait(t, ctx, `!document.getElementById('ak-secret-box').hidden && document.querySelectorAll('#keys-table tbody tr').length === 2`)
	created := fake.lastCreated()
	require.Equal(t, "alice", created["owner"])
	require.EqualValues(t, 5000, created["quota"])
	require.Equal(t, "20/s", created["rate_limit"])
	require.Equal(t, []any{"demo-chat", "demo-video"}, created["allowed_models"])
	require.EqualValues(t, 12.5, created["budget_usd"])
	id := text(t, ctx, "#ak-secret-id")
	require.Equal(t, fake.secretOf(id), text(t, ctx, "#ak-secret"))
	row := `#keys-table tr[data-key="` + id + `"]`
	require.Contains(t, text(t, ctx, row), "alice")
	require.Contains(t, text(t, ctx, row), "demo-chat, demo-video")
	for col, want := range map[int]string{3: "5000", 4: "0", 5: "5000"} { // quota, used, remaining
		require.Equal(t, want, text(t, ctx, fmt.Sprintf("%s td:nth-child(%d)", row, col)), "column %d", col)
	}
	screenshot(t, ctx, "admin")

	// Disable, then revoke (two presses).
	do(t, ctx, chromedp.Click(chromedp.CSS(row+` button[aria-label="Disable `+id+`"]`)))
	wait(t, ctx, `document.querySelector('`+row+` td:nth-child(10)').textContent === 'disabled'`)
	do(t, ctx, chromedp.Click(chromedp.CSS(row+` button.danger`)))
	require.Equal(t, "Confirm revoke", text(t, ctx, row+` button.danger`))
	do(t, ctx, chromedp.Click(chromedp.CSS(row+` button.danger`)))
	wait(t, ctx, `!document.querySelector('`+row+`')`)
	require.False(t, fake.has(id))

	// Usage per day and per model, as charts with their numbers.
	do(t, ctx,
		chromedp.SetValue(chromedp.CSS("#usage-from"), "2026-11-01"),
		chromedp.SetValue(chromedp.CSS("#usage-to"), "2026-11-07"),
		chromedp.Click(chromedp.CSS(`#usage-form button[type=submit]`)))
	wait(t, ctx, `document.querySelectorAll('#usage-charts svg').length === 6 && document.querySelector('#chart-cost-day table tbody th').textContent === '2026-11-01'`)
	require.Equal(t, "from=2026-11-01&to=2026-11-07&group_by=day", fake.usageQuery("day"))
	require.Equal(t, 7, eval[int](t, ctx, `document.querySelectorAll('#chart-cost-day rect').length`), "one bar a day, empty days too")
	require.Equal(t, 2, eval[int](t, ctx, `document.querySelectorAll('#chart-cost-model rect').length`))
	require.Equal(t, 4, eval[int](t, ctx, `document.querySelectorAll('#chart-tokens-model rect').length`), "input and output stacked")
	require.Equal(t, 6, eval[int](t, ctx, `document.querySelectorAll('#chart-token-details-model rect').length`),
		"cached input, cache writes and reasoning stacked, per model (issue 26)")
	require.Contains(t, text(t, ctx, "#chart-token-details-model table"), "4000")
	// The tallest bar of the cost per day is the day that cost most.
	tallest := eval[string](t, ctx, `[...document.querySelectorAll('#chart-cost-day rect')].sort((a, b) => b.height.baseVal.value - a.height.baseVal.value)[0].querySelector('title').textContent`)
	require.Equal(t, "2026-11-03: cost $1.50", tallest)
	axis := `[...document.querySelectorAll('#%s svg > text')].slice(0, 5).map(e => e.textContent)`
	require.Equal(t, []string{"$0", "$0.5", "$1", "$1.5", "$2"}, eval[[]string](t, ctx, fmt.Sprintf(axis, "chart-cost-day")))
	require.Equal(t, []string{"0", "2500", "5000", "7500", "10000"}, eval[[]string](t, ctx, fmt.Sprintf(axis, "chart-tokens-day")))
	require.Equal(t, "img", eval[string](t, ctx, `document.querySelector('#chart-cost-model svg').getAttribute('role')`))
	require.Contains(t, text(t, ctx, "#chart-cost-model table"), "demo-video")
	do(t, ctx, chromedp.EmulateViewport(1280, 1400))
	screenshot(t, ctx, "admin-usage")
}

func TestBrowserAdminKeysPages(t *testing.T) {
	t.Parallel()
	fake := newFakeAdmin(t, "sk-admin")
	fake.addKeys(24) // 25 with key-demo: a page of 20, then 5
	_, ctx := openTab(t, console.Config{AdminURL: fake.url}, "sk-demo", "admin")
	do(t, ctx, chromedp.SendKeys(chromedp.CSS("#admin-key-input"), "sk-admin"),
		chromedp.Click(chromedp.CSS(`#admin-key-form button[type=submit]`)))
	rows := `document.querySelectorAll('#keys-table tbody tr').length`
	wait(t, ctx, rows+` === 20 && !document.getElementById('keys-more').hidden`)
	do(t, ctx, chromedp.Click(chromedp.CSS("#keys-more")))
	wait(t, ctx, rows+` === 25 && document.getElementById('keys-more').hidden`)
	require.Equal(t, "key_24", eval[string](t, ctx, `document.querySelector('#keys-table tbody tr:last-child').dataset.key`))
}

func TestBrowserAdminViewsHiddenWithoutAnAdminURL(t *testing.T) {
	t.Parallel()
	_, ctx := openTab(t, console.Config{}, "sk-demo", "admin")
	require.False(t, eval[bool](t, ctx, `document.getElementById('admin-off').hidden`))
	require.True(t, eval[bool](t, ctx, `document.getElementById('admin-on').hidden`))
}
