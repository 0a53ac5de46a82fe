package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/gateway"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/videos"
)

// sweepPoint is one concurrency of the sweep.
type sweepPoint struct {
	Target    string        `json:"target"`
	Clients   int           `json:"clients"`
	Load      loadResult    `json:"load"`
	OpsPerSec float64       `json:"ops_per_sec"`
	CPUPerOp  time.Duration `json:"cpu_per_op_ns"`
	// Relative is OpsPerSec over that of the 32-client point.
	Relative float64 `json:"relative_to_32,omitempty"`
}

func (b *bench) sweepClients() []int {
	if b.o.short {
		return []int{1, 32}
	}
	return []int{1, 8, 32, 64, 512, 2048}
}

// runSweep runs non-streaming chat against each target at each
// concurrency, on one server process per target.
func (b *bench) runSweep(ctx context.Context) error {
	w, _ := workloadByName("chat")
	for _, t := range targets {
		if !b.o.scenario.MatchString(t.name + "/chat") {
			continue
		}
		c, err := b.start(t)
		if err != nil {
			return err
		}
		var at32 float64
		first := len(b.rep.Sweep)
		for _, n := range b.sweepClients() {
			if err := ctx.Err(); err != nil {
				c.stop()
				return err
			}
			b.logf("sweep %s/chat: %d clients for %s", t.name, n, b.o.duration)
			runLoad(ctx, &w, c.addr, 0, n, b.o.warmup, 0)
			r, err := measure(ctx, c, &w, 0, n, b.o.duration, 0)
			if err != nil {
				c.stop()
				return err
			}
			if n == 32 {
				at32 = r.OpsPerSec
			}
			b.rep.Sweep = append(b.rep.Sweep, sweepPoint{Target: t.name, Clients: n, Load: r.Load, OpsPerSec: r.OpsPerSec, CPUPerOp: r.CPUPerOp})
		}
		c.stop()
		if at32 > 0 {
			for i := first; i < len(b.rep.Sweep); i++ {
				b.rep.Sweep[i].Relative = b.rep.Sweep[i].OpsPerSec / at32
			}
		}
	}
	return nil
}

// streamsResult is the memory that one server needs per open stream.
type streamsResult struct {
	Target     string        `json:"target"`
	Streams    int           `json:"streams"`
	Pace       time.Duration `json:"pace_ns"`
	OpenAtOnce int64         `json:"open_at_once"`
	OpenIn     time.Duration `json:"open_in_ns"`
	// HeapPerStream and RSSPerStream are the growth of the live heap and
	// of the RSS, from before the streams to when they were all open,
	// divided by the streams open at that moment.
	HeapPerStream    float64 `json:"heap_per_stream_bytes"`
	RSSPerStream     float64 `json:"rss_per_stream_bytes"`
	Completed        int64   `json:"completed"`
	Errors           int64   `json:"errors"`
	Err              string  `json:"first_error,omitempty"`
	GoroutinesBefore uint64  `json:"goroutines_before"`
	GoroutinesOpen   uint64  `json:"goroutines_open"`
	GoroutinesAfter  uint64  `json:"goroutines_after"`
}

// runStreams holds -streams paced streams open at once against each
// target: the gateway pacing its demo backend, the relays relaying a
// paced upstream.
func (b *bench) runStreams(ctx context.Context) error {
	pace := b.o.streamPace
	paced, err := startChild(roleUpstream, b.loadCPU(), "-chunk-delay", pace.String())
	if err != nil {
		return err
	}
	defer paced.stop()
	for _, t := range targets {
		if t.role == roleFloor || !b.o.scenario.MatchString(t.name+"/stream") {
			continue
		}
		n := b.o.streams
		args := []string{"-chunk-delay", pace.String()}
		if t.relay {
			args = []string{"-upstream", paced.addr}
			// A relay holds two sockets per stream; stay within the
			// open-file limit (which only a privileged process raises).
			if most := (int(b.rep.Config.FileLimit) - 64) / 2; n > most {
				b.logf("streams %s: %d streams, not %d: the open-file limit is %d", t.name, most, n, b.rep.Config.FileLimit)
				n = most
			}
		}
		c, err := startChild(t.role, b.serverCPU(), args...)
		if err != nil {
			return err
		}
		b.logf("streams %s: %d streams paced at %s", t.name, n, pace)
		r, err := holdStreams(ctx, c, n)
		c.stop()
		if err != nil {
			return fmt.Errorf("streams %s: %w", t.name, err)
		}
		r.Target, r.Pace = t.name, pace
		b.rep.Streams = append(b.rep.Streams, r)
	}
	return nil
}

// holdStreams opens n streams at once, measures the server when they are
// all open, waits for them to complete, and then for the server's
// goroutines to return to where they were.
func holdStreams(ctx context.Context, c *child, n int) (streamsResult, error) {
	r := streamsResult{Streams: n}
	before, err := c.stats(true)
	if err != nil {
		return r, err
	}
	r.GoroutinesBefore = before.Goroutines

	tr := newTransport(n)
	hc := &http.Client{Transport: tr}
	var open, opened, completed, errs atomic.Int64
	allOpen := make(chan struct{})
	var firstErr atomic.Value
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			// settled counts the stream once, when its headers arrive or
			// when it fails before: the measurement waits for all.
			settled := sync.OnceFunc(func() {
				if opened.Add(1) == int64(n) {
					close(allOpen)
				}
			})
			err := func() error {
				res, err := (&client{hc: hc}).post(c.addr, pathChat, streamBody)
				if err != nil {
					return err
				}
				open.Add(1)
				defer open.Add(-1)
				settled()
				cl := &client{buf: make([]byte, 4<<10)}
				k, _, tail, err := cl.readEvents(res, time.Now())
				if err != nil {
					return err
				}
				if k != streamEvents || !strings.HasSuffix(string(tail), "data: [DONE]\n\n") {
					return fmt.Errorf("stream of %d events ending %q", k, tail)
				}
				return nil
			}()
			settled()
			if err != nil {
				errs.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			completed.Add(1)
		})
	}
	select {
	case <-allOpen:
	case <-ctx.Done():
		wg.Wait()
		return r, ctx.Err()
	}
	r.OpenIn = time.Since(start)
	r.OpenAtOnce = open.Load()
	during, err := c.stats(true)
	if err != nil {
		return r, err
	}
	r.GoroutinesOpen = during.Goroutines
	if r.OpenAtOnce > 0 {
		r.HeapPerStream = float64(int64(during.HeapBytes)-int64(before.HeapBytes)) / float64(r.OpenAtOnce)
		r.RSSPerStream = float64(int64(during.RSS)-int64(before.RSS)) / float64(r.OpenAtOnce)
	}
	wg.Wait()
	tr.CloseIdleConnections()
	r.Completed, r.Errors = completed.Load(), errs.Load()
	if e, ok := firstErr.Load().(string); ok {
		r.Err = e
	}
	// The server's connection goroutines end when the client's idle
	// connections close, and those of a relay's upstream connections
	// when it closes its idle ones; give them a moment.
	if err := c.closeIdle(); err != nil {
		return r, err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		after, err := c.stats(false)
		if err != nil {
			return r, err
		}
		r.GoroutinesAfter = after.Goroutines
		if after.Goroutines <= before.Goroutines || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r, nil
}

// storeResult is the memory of the in-memory stores and the cost of a
// key lookup.
type storeResult struct {
	Items   []storeItems `json:"items"`
	Lookups []lookupCost `json:"lookups"`
}

type storeItems struct {
	Name         string  `json:"name"`
	Items        int     `json:"items"`
	HeapBytes    uint64  `json:"heap_bytes"`
	BytesPerItem float64 `json:"bytes_per_item"`
}

type lookupCost struct {
	Name        string  `json:"name"`
	Keys        int     `json:"keys"`
	NsPerLookup float64 `json:"ns_per_lookup"`
}

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// runStore measures, in this process: the heap per video task stored by
// the gateway (each created through the whole stack, as a client would),
// and the heap per key and the lookup cost of auth.MemoryKeyStore.
func (b *bench) runStore(ctx context.Context) error {
	items, keys := 100_000, 1_000_000
	if b.o.short {
		items, keys = 1_000, 5_000
	}
	res := &storeResult{}
	b.rep.Store = res

	b.logf("store: %d video tasks", items)
	it, err := storeVideoTasks(ctx, items)
	if err != nil {
		return err
	}
	res.Items = append(res.Items, it)

	b.logf("store: %d responses", items)
	it, err = storeResponses(ctx, items)
	if err != nil {
		return err
	}
	res.Items = append(res.Items, it)

	for _, k := range []int{1000, keys} { // at 1000 keys the table fits in cache: the baseline of the lookup
		if err := ctx.Err(); err != nil {
			return err
		}
		b.logf("store: %d keys", k)
		it, l, err := keyLookups(ctx, k)
		if err != nil {
			return err
		}
		res.Items = append(res.Items, it)
		res.Lookups = append(res.Lookups, l)
	}
	return nil
}

func storeVideoTasks(ctx context.Context, n int) (storeItems, error) {
	c := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(ctx, c.Keys)
	if err != nil {
		return storeItems{}, err
	}
	tasks := videos.NewMemoryStore(nil)
	before := liveHeap()
	g, err := gateway.New(gateway.Config{
		Keys:    keys,
		Catalog: models.NewMemoryCatalog(c.Models...),
		Videos:  demo.NewVideoGenerator(),
		Tasks:   tasks,
	}) // the runner does not run: the tasks stay queued
	if err != nil {
		return storeItems{}, err
	}
	for i := range n {
		if i%1024 == 0 && ctx.Err() != nil {
			return storeItems{}, ctx.Err()
		}
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, pathVideos, strings.NewReader(videoBody))
		r.Header.Set("Authorization", "Bearer "+benchSecret)
		r.Header.Set("Content-Type", "application/json")
		g.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			return storeItems{}, fmt.Errorf("video create: %d %s", w.Code, w.Body)
		}
	}
	after := liveHeap()
	if tasks.Len() != n {
		return storeItems{}, fmt.Errorf("stored %d video tasks, want %d", tasks.Len(), n)
	}
	runtime.KeepAlive(g)
	return storeItems{Name: "video task (videos.MemoryStore)", Items: n, HeapBytes: after - before,
		BytesPerItem: float64(after-before) / float64(n)}, nil
}

// storeResponses stores n responses, each created through the whole
// demo gateway by a non-streaming POST /v1/responses (store defaults to
// true): the request of the load, and its 61-token reply.
func storeResponses(ctx context.Context, n int) (storeItems, error) {
	c := gateway.DemoFile()
	keys, err := gateway.NewKeyStore(ctx, c.Keys)
	if err != nil {
		return storeItems{}, err
	}
	store := responses.NewMemoryStore(&responses.MemoryStoreOptions{MaxResponses: -1, MaxAge: -1})
	before := liveHeap()
	g, err := gateway.New(gateway.Config{
		Keys:          keys,
		Catalog:       models.NewMemoryCatalog(c.Models...),
		Responses:     demo.NewTextBackend().Responses(),
		ResponseStore: store,
	})
	if err != nil {
		return storeItems{}, err
	}
	body := strings.Replace(responsesBody, `"stream":true,`, "", 1)
	body = strings.Replace(body, `,"store":false`, "", 1)
	for i := range n {
		if i%1024 == 0 && ctx.Err() != nil {
			return storeItems{}, ctx.Err()
		}
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, pathResponses, strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+benchSecret)
		r.Header.Set("Content-Type", "application/json")
		g.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			return storeItems{}, fmt.Errorf("response create: %d %s", w.Code, w.Body)
		}
	}
	after := liveHeap()
	if store.Len() != n {
		return storeItems{}, fmt.Errorf("stored %d responses, want %d", store.Len(), n)
	}
	runtime.KeepAlive(g)
	return storeItems{Name: "response (responses.MemoryStore)", Items: n, HeapBytes: after - before,
		BytesPerItem: float64(after-before) / float64(n)}, nil
}

// keyLookups fills an auth.MemoryKeyStore with n keys and times lookups
// of random existing keys.
func keyLookups(ctx context.Context, n int) (storeItems, lookupCost, error) {
	secret := func(i int) string { return "sk-bench-" + strconv.Itoa(i) }
	before := liveHeap()
	ks := auth.NewMemoryKeyStore()
	for i := range n {
		if err := ks.Add(ctx, secret(i), auth.Key{ID: "key-" + strconv.Itoa(i), Owner: "bench", Quota: auth.UnlimitedQuota()}); err != nil {
			return storeItems{}, lookupCost{}, err
		}
	}
	after := liveHeap()
	sample := make([]string, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range sample {
		sample[i] = secret(rng.IntN(n))
	}
	const lookups = 400_000
	start := time.Now()
	for i := range lookups {
		if _, err := ks.Lookup(ctx, sample[i%len(sample)]); err != nil {
			return storeItems{}, lookupCost{}, err
		}
	}
	ns := float64(time.Since(start).Nanoseconds()) / lookups
	runtime.KeepAlive(ks)
	name := fmt.Sprintf("API key (auth.MemoryKeyStore, %d keys)", n)
	return storeItems{Name: name, Items: n, HeapBytes: after - before, BytesPerItem: float64(after-before) / float64(n)},
		lookupCost{Name: "auth.MemoryKeyStore.Lookup", Keys: n, NsPerLookup: ns}, nil
}
