package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/http/pprof"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/observe/metrics"
	"github.com/gatewaykit/gatewaykit/relay"
	"github.com/gatewaykit/gatewaykit/store/sqlite"
	"github.com/gatewaykit/gatewaykit/videos"
)

// childEnv names the environment variable that makes the program (or the
// test binary) a server child instead of the load tool: its value is the
// role.
const childEnv = "GATEWAYKIT_BENCH_CHILD"

// The server roles that the load tool runs as child processes.
const (
	roleFloor    = "floor"    // canned bytes of the gateway's size
	roleUpstream = "upstream" // the fake OpenAI-compatible upstream (canned too)
	roleNaive    = "naive"    // httputil.ReverseProxy to the upstream
	roleCopy     = "copy"     // a relay that copies the upstream's bytes, flushing each read
	roleGateway  = "gateway"  // the gateway on the demo backend
	// roleGatewaySQLite is the gateway on the demo backend with its state
	// in a SQLite file, as the example server's default.
	roleGatewaySQLite = "gateway-sqlite"
	// roleGatewayMetrics is roleGateway with its Prometheus metrics on
	// (package observe/metrics, traces off), as the example server runs.
	roleGatewayMetrics = "gateway-metrics"
	// roleGatewayRelay is the gateway relaying to the upstream.
	roleGatewayRelay = "gateway-relay"
)

// benchSecret is the API key that the load sends to the gateway.
const benchSecret = "sk-demo"

// unlimitedRate is the gateway's per-key rate limit under load: the
// limiter runs for every request, as in the example server, but never
// refuses one.
var unlimitedRate = auth.Limit{Requests: 1 << 30, Period: time.Second}

// childMain runs a server role until its standard input is closed (the
// load tool closes it, or exits). It prints "ready <addr> <debug addr>"
// on standard output once both listeners are up.
func childMain(role string, args []string) int {
	fs := flag.NewFlagSet(role, flag.ContinueOnError)
	cpu := fs.Int("cpu", -1, "pin the process to this CPU (-1: do not pin)")
	upstream := fs.String("upstream", "", "base URL of the upstream (naive)")
	chunkDelay := fs.Duration("chunk-delay", 0, "pause before each stream chunk (gateway: demo pacing; upstream: canned pacing)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	logger := log.New(os.Stderr, "bench "+role+": ", 0)
	if *cpu >= 0 {
		if err := pinProcess(*cpu); err != nil {
			logger.Print(err)
			return 1
		}
	}
	if _, err := raiseFileLimit(fileLimit); err != nil {
		logger.Print(err)
		return 1
	}
	h, closeIdle, cleanup, err := newRole(role, *upstream, *chunkDelay)
	if err != nil {
		logger.Print(err)
		return 1
	}
	defer cleanup()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		logger.Print(err)
		return 1
	}
	dln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		logger.Print(err)
		return 1
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: logger}
	dsrv := &http.Server{Handler: debugMux(closeIdle), ReadHeaderTimeout: 10 * time.Second, ErrorLog: logger}
	go func() { _ = srv.Serve(ln) }()
	go func() { _ = dsrv.Serve(dln) }()
	fmt.Printf("ready %s %s\n", ln.Addr(), dln.Addr())

	// The parent holds our standard input: EOF means it is done with us,
	// or has died. Either way, stop.
	_, _ = io.Copy(io.Discard, os.Stdin)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	_ = dsrv.Shutdown(ctx)
	return 0
}

// newRole returns the handler of a role, a function that closes its idle
// upstream connections (relays keep them, with two goroutines each), and
// what to run when it stops.
func newRole(role, upstream string, chunkDelay time.Duration) (h http.Handler, closeIdle, cleanup func(), err error) {
	nop := func() {}
	switch role {
	case roleFloor, roleUpstream:
		c, err := recordCanned()
		if err != nil {
			return nil, nil, nil, err
		}
		c.pace = chunkDelay
		return c, nop, nop, nil
	case roleNaive:
		u, err := url.Parse(upstream)
		if err != nil || u.Host == "" {
			return nil, nil, nil, fmt.Errorf("naive: bad -upstream %q", upstream)
		}
		tr := newUpstreamTransport()
		return newNaiveRelay(u, tr), tr.CloseIdleConnections, nop, nil
	case roleCopy:
		u, err := url.Parse(upstream)
		if err != nil || u.Host == "" {
			return nil, nil, nil, fmt.Errorf("copy: bad -upstream %q", upstream)
		}
		tr := newUpstreamTransport()
		return newCopyRelay(u, tr), tr.CloseIdleConnections, nop, nil
	case roleGateway:
		var opts []demo.TextOption
		if chunkDelay > 0 {
			opts = append(opts, demo.WithChunkDelay(chunkDelay))
		}
		g, err := newDemoGateway(opts...)
		if err != nil {
			return nil, nil, nil, err
		}
		return g, nop, runGateway(g), nil
	case roleGatewayMetrics:
		var opts []demo.TextOption
		if chunkDelay > 0 {
			opts = append(opts, demo.WithChunkDelay(chunkDelay))
		}
		h, g, err := newMetricsGateway(opts...)
		if err != nil {
			return nil, nil, nil, err
		}
		return h, nop, runGateway(g), nil
	case roleGatewaySQLite:
		var opts []demo.TextOption
		if chunkDelay > 0 {
			opts = append(opts, demo.WithChunkDelay(chunkDelay))
		}
		g, closeDB, err := newSQLiteGateway(opts...)
		if err != nil {
			return nil, nil, nil, err
		}
		stop := runGateway(g)
		return g, nop, func() { stop(); closeDB() }, nil
	case roleGatewayRelay:
		if upstream == "" {
			return nil, nil, nil, errors.New("gateway-relay: no -upstream")
		}
		tr := relay.NewTransport()
		g, err := newRelayGateway(upstream, tr)
		if err != nil {
			return nil, nil, nil, err
		}
		return relay.ForwardHeaders(g), tr.CloseIdleConnections, runGateway(g), nil
	}
	return nil, nil, nil, fmt.Errorf("unknown role %q", role)
}

// runGateway runs g's video runner and returns the function that stops
// it.
func runGateway(g *gateway.Gateway) func() {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = g.Run(ctx) }()
	return func() {
		cancel()
		sctx, scancel := context.WithTimeout(context.Background(), time.Second)
		defer scancel()
		_ = g.Shutdown(sctx)
	}
}

// newDemoGateway is the gateway as the example server wires it (package
// gateway, the demo configuration, the demo backends, the access log),
// except that its logger discards and the per-key rate limit is too high
// to refuse anything: the limiter still runs for every request.
func newDemoGateway(textOpts ...demo.TextOption) (*gateway.Gateway, error) {
	c := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(context.Background(), c.Keys)
	if err != nil {
		return nil, err
	}
	text := demo.NewTextBackend(textOpts...)
	return gateway.New(gateway.Config{
		Keys:        keys,
		Catalog:     models.NewMemoryCatalog(c.Models...),
		Chat:        text.Chat(),
		Completions: text.Completions(),
		Responses:   text.Responses(),
		Videos:      demo.NewVideoGenerator(),
		RateLimit:   unlimitedRate,
		AccessLog:   true,
	})
}

// newMetricsGateway is newDemoGateway with the example server's metrics:
// the metrics middleware around it, the video task counters, and a
// registry with the Go runtime's and the process's collectors, scraped by
// nobody (a scrape costs nothing per request).
func newMetricsGateway(textOpts ...demo.TextOption) (http.Handler, *gateway.Gateway, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m := metrics.New(reg)
	c := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(context.Background(), c.Keys)
	if err != nil {
		return nil, nil, err
	}
	text := demo.NewTextBackend(textOpts...)
	g, err := gateway.New(gateway.Config{
		Keys:        keys,
		Catalog:     models.NewMemoryCatalog(c.Models...),
		Chat:        text.Chat(),
		Completions: text.Completions(),
		Responses:   text.Responses(),
		Videos:      demo.NewVideoGenerator(),
		Tasks:       m.Tasks(videos.NewMemoryStore(nil)),
		RateLimit:   unlimitedRate,
		AccessLog:   true,
	})
	if err != nil {
		return nil, nil, err
	}
	return m.Middleware(g), g, nil
}

// newSQLiteGateway is newDemoGateway with its state in a new SQLite file
// in a temporary directory, wired as the example server's default
// (-db sqlite:…): keys through auth.NewCachedKeyStore, responses, video
// tasks and content in the file. closeDB closes and removes it.
func newSQLiteGateway(textOpts ...demo.TextOption) (g *gateway.Gateway, closeDB func(), err error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "gatewaykit-bench")
	if err != nil {
		return nil, nil, err
	}
	db, err := sqlite.Open(ctx, filepath.Join(dir, "gatewaykit.db"), nil)
	if err != nil {
		os.RemoveAll(dir)
		return nil, nil, err
	}
	closeDB = func() {
		db.Close()
		os.RemoveAll(dir)
	}
	c := gateway.DemoFile()
	if err := gateway.PutKeys(ctx, db.Keys(), c.Keys); err != nil {
		closeDB()
		return nil, nil, err
	}
	text := demo.NewTextBackend(textOpts...)
	g, err = gateway.New(gateway.Config{
		Keys:          auth.NewCachedKeyStore(db.Keys(), auth.DefaultKeyCacheTTL),
		Catalog:       models.NewMemoryCatalog(c.Models...),
		Chat:          text.Chat(),
		Completions:   text.Completions(),
		Responses:     text.Responses(),
		ResponseStore: db.Responses(),
		Videos:        demo.NewVideoGenerator(),
		Tasks:         db.Tasks(),
		Contents:      db.Contents(),
		RateLimit:     unlimitedRate,
		AccessLog:     true,
	})
	if err != nil {
		closeDB()
		return nil, nil, err
	}
	return g, closeDB, nil
}

// newRelayGateway is the gateway as the relay example wires it: every
// demo model routed to the upstream (base URL upstream), the relay's
// backends for chat, completions, responses and videos, its pass-through access
// points, behind the same auth, rate limit and access log as
// newDemoGateway.
func newRelayGateway(upstream string, tr *http.Transport) (*gateway.Gateway, error) {
	ms := append(demo.TextModels(), demo.VideoModels()...)
	routes := make([]relay.Route, len(ms))
	for i, m := range ms {
		routes[i] = relay.Route{Model: m.ID, Upstreams: []relay.Upstream{{BaseURL: upstream + "/v1", Key: "sk-upstream"}}}
	}
	r, err := relay.New(routes, relay.WithTransport(tr))
	if err != nil {
		return nil, err
	}
	keys, err := gateway.NewKeyStore(context.Background(), gateway.DemoKeys())
	if err != nil {
		return nil, err
	}
	catalog := models.NewMemoryCatalog(ms...)
	return gateway.New(gateway.Config{
		Keys:        keys,
		Catalog:     catalog,
		Chat:        r.Chat(),
		Completions: r.Completions(),
		Responses:   r.Responses(),
		Videos:      r.Videos(),
		Routes: func(mux *http.ServeMux) {
			relay.RegisterAccess(mux, relay.NewAccessHandler(r, catalog))
		},
		RateLimit: unlimitedRate,
		AccessLog: true,
	})
}

// newUpstreamTransport is the keep-alive transport of the relays, sized
// for the load.
func newUpstreamTransport() *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: fileLimit,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// newNaiveRelay is the floor of any relay: one httputil.ReverseProxy hop
// to the upstream.
func newNaiveRelay(u *url.URL, tr http.RoundTripper) http.Handler {
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = tr
	rp.FlushInterval = -1 // flush every write, like an SSE relay must
	rp.ErrorLog = log.New(os.Stderr, "naive-relay: ", 0)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Without full duplex, an HTTP/1 server closes the request body
		// once the response starts, which races with the proxy's
		// transport still checking that body for its end: the upstream
		// connection is then closed in the middle of the stream.
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	})
}

// newCopyRelay is the least a relay can do, without httputil: send the
// client's request (method, path, query, body and headers) to the
// upstream, then copy the reply's status, headers and bytes back,
// flushing after every read, as an SSE relay must. It does nothing else:
// no header hygiene, no error mapping, no usage, no timeouts.
func newCopyRelay(upstream *url.URL, tr http.RoundTripper) http.Handler {
	client := &http.Client{Transport: tr}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := *upstream
		u.Path, u.RawPath, u.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
		req, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		req.Header = r.Header.Clone()
		req.ContentLength = r.ContentLength
		// As for the naive relay: the request body must stay open while
		// the reply streams.
		_ = http.NewResponseController(w).EnableFullDuplex()
		res, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, vs := range res.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(res.StatusCode)
		f, _ := w.(http.Flusher)
		buf := make([]byte, 32<<10)
		for {
			n, err := res.Body.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					return
				}
				if f != nil {
					f.Flush()
				}
			}
			if err != nil {
				return
			}
		}
	})
}

// debugMux serves the counters of the process, pprof, and a way to close
// the idle upstream connections of a relay.
func debugMux(closeIdle func()) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /debug/close-idle", func(w http.ResponseWriter, r *http.Request) {
		closeIdle()
		w.WriteHeader(http.StatusNoContent)
	})
	mux.HandleFunc("GET /debug/stats", func(w http.ResponseWriter, r *http.Request) {
		st, err := readProcStats(r.URL.Query().Get("gc") == "1")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(st)
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	return mux
}

// cannedReply is one recorded reply: headers and body, and for a stream
// its events, each written and flushed on its own.
type cannedReply struct {
	header http.Header
	body   []byte
	events [][]byte
}

// canned serves the gateway's replies as recorded bytes, as the cheapest
// net/http server would: the floor of every scenario, and the fake
// upstream of the relays.
type canned struct {
	chat, stream, responses, created, status, modelList cannedReply
	pace                                                time.Duration
	bufs                                                sync.Pool
}

// recordCanned records the demo gateway's replies to the load's requests.
// The chat stream carries usage (the load asks for it), as an upstream
// stream must for the relay to account for it.
func recordCanned() (*canned, error) {
	g, err := newDemoGateway()
	if err != nil {
		return nil, err
	}
	c := &canned{bufs: sync.Pool{New: func() any { return new(bytes.Buffer) }}}
	for _, rec := range []struct {
		dst          *cannedReply
		method, path string
		body         string
		stream       bool
	}{
		{&c.chat, http.MethodPost, pathChat, chatBody, false},
		{&c.stream, http.MethodPost, pathChat, streamBody, true},
		{&c.responses, http.MethodPost, pathResponses, responsesBody, true},
		{&c.created, http.MethodPost, pathVideos, videoBody, false},
		{&c.modelList, http.MethodGet, "/v1/models", "", false},
	} {
		if err := record(g, rec.dst, rec.method, rec.path, rec.body, rec.stream); err != nil {
			return nil, err
		}
	}
	var created struct{ ID string }
	if err := json.Unmarshal(c.created.body, &created); err != nil || created.ID == "" {
		return nil, fmt.Errorf("record: video create reply %q", c.created.body)
	}
	if err := record(g, &c.status, http.MethodGet, pathVideos+"/"+created.ID, "", false); err != nil {
		return nil, err
	}
	return c, nil
}

func record(h http.Handler, dst *cannedReply, method, path, body string, stream bool) error {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(method, path, strings.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+benchSecret)
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		return fmt.Errorf("record %s %s: status %d: %s", method, path, w.Code, w.Body)
	}
	dst.header = w.Header().Clone()
	dst.body = w.Body.Bytes()
	if stream {
		for ev := range bytes.SplitAfterSeq(dst.body, []byte("\n\n")) {
			if len(ev) > 0 {
				dst.events = append(dst.events, ev)
			}
		}
	}
	return nil
}

func (c *canned) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	buf := c.bufs.Get().(*bytes.Buffer)
	buf.Reset()
	_, err := buf.ReadFrom(r.Body)
	isStream := bytes.Contains(buf.Bytes(), []byte(`"stream":true`))
	c.bufs.Put(buf)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var reply *cannedReply
	switch {
	case r.Method == http.MethodPost && r.URL.Path == pathChat && isStream:
		reply = &c.stream
	case r.Method == http.MethodPost && r.URL.Path == pathChat:
		reply = &c.chat
	case r.Method == http.MethodPost && r.URL.Path == pathResponses:
		reply = &c.responses
	case r.Method == http.MethodPost && r.URL.Path == pathVideos:
		reply = &c.created
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, pathVideos+"/"):
		reply = &c.status
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		reply = &c.modelList
	default:
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	for k, v := range reply.header {
		h[k] = v
	}
	w.WriteHeader(http.StatusOK)
	if reply.events == nil {
		_, _ = w.Write(reply.body)
		return
	}
	f := w.(http.Flusher)
	var t *time.Timer
	for _, ev := range reply.events {
		if c.pace > 0 {
			if t == nil {
				t = time.NewTimer(c.pace)
				defer t.Stop()
			} else {
				t.Reset(c.pace)
			}
			select {
			case <-t.C:
			case <-r.Context().Done():
				return
			}
		}
		if _, err := w.Write(ev); err != nil {
			return
		}
		f.Flush()
	}
}

// child is a server role running as a child process.
type child struct {
	role  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	addr  string // base URL of the server
	debug string // base URL of its debug endpoint
	wait  chan error
	pid   int // of an external server (-server), whose stats come from /proc
}

// startChild re-executes this binary as a server role and waits until
// it listens.
func startChild(role string, cpu int, args ...string) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	args = append([]string{"-cpu", fmt.Sprint(cpu)}, args...)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"="+role, childRaceOptions())
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", role, err)
	}
	c := &child{role: role, cmd: cmd, stdin: stdin, wait: make(chan error, 1)}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = stdin.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s did not start: %w", role, err)
	}
	var addr, debug string
	if _, err := fmt.Sscanf(line, "ready %s %s", &addr, &debug); err != nil {
		_ = stdin.Close()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s: unexpected first line %q", role, line)
	}
	c.addr, c.debug = "http://"+addr, "http://"+debug
	go func() { c.wait <- cmd.Wait() }()
	return c, nil
}

// childRaceOptions returns the GORACE setting of a child: the parent's,
// with atexit_sleep_ms=0. A binary built with -race (the test binary, under
// go test -race) otherwise sleeps a second as it exits, waiting for late
// race reports, and the load tool stops a child after every run. Races
// are still reported as they happen. Binaries built without -race ignore
// GORACE.
func childRaceOptions() string {
	return "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
}

// stop closes the child's standard input and waits for it to exit,
// killing it after a few seconds.
func (c *child) stop() error {
	if c.pid != 0 {
		return c.stopExternal()
	}
	_ = c.stdin.Close()
	select {
	case err := <-c.wait:
		return err
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.wait
		return fmt.Errorf("%s did not stop; killed", c.role)
	}
}

// stats fetches the child's counters; with gc it runs a GC first.
func (c *child) stats(gc bool) (procStats, error) {
	if c.pid != 0 {
		return c.externalStats()
	}
	var st procStats
	u := c.debug + "/debug/stats"
	if gc {
		u += "?gc=1"
	}
	res, err := http.Get(u)
	if err != nil {
		return st, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		return st, fmt.Errorf("%s stats: %s: %s", c.role, res.Status, b)
	}
	err = json.NewDecoder(res.Body).Decode(&st)
	return st, err
}

// closeIdle asks a relay child to close its idle upstream connections.
func (c *child) closeIdle() error {
	res, err := http.Post(c.debug+"/debug/close-idle", "", nil)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		return fmt.Errorf("%s close-idle: %s", c.role, res.Status)
	}
	return nil
}

// profile saves the child's CPU profile over d, and its allocations
// over the same d, to path+".cpu.pprof" and path+".allocs.pprof".
func (c *child) profile(d time.Duration, path string) error {
	secs := fmt.Sprint(int(d.Round(time.Second) / time.Second))
	profiles := []struct{ endpoint, suffix string }{
		{"profile", ".cpu.pprof"},
		{"allocs", ".allocs.pprof"},
	}
	errs := make([]error, len(profiles))
	var wg sync.WaitGroup
	for i, p := range profiles {
		wg.Go(func() {
			errs[i] = fetchTo(c.debug+"/debug/pprof/"+p.endpoint+"?seconds="+secs, path+p.suffix)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func fetchTo(u, path string) error {
	res, err := http.Get(u)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", u, res.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, res.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
