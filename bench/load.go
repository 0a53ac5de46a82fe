package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gatewaykit/gatewaykit/sse"
)

// The requests of the load. The chat reply is 61 tokens (~600 bytes);
// the chat stream is 64 chunks (63 one-token content chunks and the
// finish chunk), the usage chunk, then [DONE]: 66 events. The responses
// stream is the same reply as typed events, from response.created to
// response.completed, then [DONE].
const (
	pathChat      = "/v1/chat/completions"
	pathResponses = "/v1/responses"
	pathVideos    = "/v1/videos"

	chatBody      = `{"model":"demo-chat","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	streamBody    = `{"model":"demo-chat","stream":true,"stream_options":{"include_usage":true},"max_tokens":63,"messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Hello, how are you today?"}],"temperature":0.7}`
	responsesBody = `{"model":"demo-chat","stream":true,"instructions":"You are a helpful assistant.","input":"Hello, how are you today?","temperature":0.7,"store":false}`
	videoBody     = `{"model":"demo-video","prompt":"A red kite over a green hill at dawn, slow pan, soft light.","seconds":"4","size":"1280x720"}`

	streamEvents = 66
)

// A workload is one kind of operation that a client repeats.
type workload struct {
	name string
	// Streams: the request, and the event that must end the stream.
	stream     bool
	path, body string
	lastEvent  func(sse.Event) bool
	// do runs one operation against base and records it; events is the
	// number of events a stream must have.
	do func(c *client, w *workload, base string, events int, rec *recorder) error
}

var workloads = []workload{
	{name: "chat", do: (*client).chat},
	{name: "stream", stream: true, path: pathChat, body: streamBody, do: (*client).stream,
		lastEvent: func(ev sse.Event) bool { return ev.IsDone() }},
	{name: "responses", stream: true, path: pathResponses, body: responsesBody, do: (*client).stream,
		lastEvent: func(ev sse.Event) bool { return ev.IsDone() }},
	{name: "video", do: (*client).video},
	{name: "poll", do: (*client).poll},
}

func workloadByName(name string) (workload, bool) {
	for _, w := range workloads {
		if w.name == name {
			return w, true
		}
	}
	return workload{}, false
}

// probe sends one request of a streaming workload, parses the whole
// stream with sse.Read and checks its last event; it returns the number
// of events, which every stream of the load must then have.
func probe(w *workload, base string) (int, error) {
	c := &client{hc: &http.Client{Timeout: time.Minute}}
	defer c.hc.CloseIdleConnections()
	res, err := c.post(base, w.path, w.body)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return 0, fmt.Errorf("probe: status %d: %s", res.StatusCode, b)
	}
	var last sse.Event
	n := 0
	for ev, err := range sse.Read(res.Body) {
		if err != nil {
			return 0, fmt.Errorf("probe: %w", err)
		}
		last = ev
		n++
	}
	if n < 2 || !w.lastEvent(last) {
		return 0, fmt.Errorf("probe: a stream of %d events ending with %q %.100q", n, last.Type, last.Data)
	}
	return n, nil
}

// client sends requests over a shared keep-alive transport; each worker
// has its own client value with its own buffers.
type client struct {
	hc  *http.Client
	buf []byte
	// polled is the task whose status the poll workload asks for.
	polled string
}

func newTransport(conns int) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: -1}).DialContext,
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
}

// recorder collects one worker's measurements.
type recorder struct {
	lat    []time.Duration // whole request (streams: to the last byte)
	ttfb   []time.Duration // streams: to the first byte of the body
	events int64
	ops    int64
	errs   int64
	err    error // the first error
}

func (r *recorder) fail(err error) {
	r.errs++
	if r.err == nil {
		r.err = err
	}
}

func (c *client) post(base, path, body string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+benchSecret)
	return c.hc.Do(req)
}

func (c *client) get(base, path string) (*http.Response, error) {
	req, err := http.NewRequest(http.MethodGet, base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+benchSecret)
	return c.hc.Do(req)
}

// readAll reads res's body into c.buf and closes it; a status other
// than 200 is an error.
func (c *client) readAll(res *http.Response) ([]byte, error) {
	defer res.Body.Close()
	buf := bytes.NewBuffer(c.buf[:0])
	_, err := buf.ReadFrom(res.Body)
	c.buf = buf.Bytes()
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %.200s", res.StatusCode, c.buf)
	}
	return c.buf, nil
}

func (c *client) chat(_ *workload, base string, _ int, rec *recorder) error {
	start := time.Now()
	res, err := c.post(base, pathChat, chatBody)
	if err != nil {
		return err
	}
	body, err := c.readAll(res)
	if err != nil {
		return err
	}
	if !bytes.Contains(body, []byte(`"chat.completion"`)) {
		return fmt.Errorf("not a chat completion: %.200s", body)
	}
	rec.lat = append(rec.lat, time.Since(start))
	return nil
}

// stream reads one stream, counting its events, and checks that it has
// as many as the probe had (and, for chat, that it ends with [DONE]).
func (c *client) stream(w *workload, base string, events int, rec *recorder) error {
	start := time.Now()
	res, err := c.post(base, w.path, w.body)
	if err != nil {
		return err
	}
	n, ttfb, tail, err := c.readEvents(res, start)
	if err != nil {
		return err
	}
	if n != events || (w.path == pathChat && !bytes.HasSuffix(tail, []byte("data: [DONE]\n\n"))) {
		return fmt.Errorf("stream of %d events ending %q, want %d", n, tail, events)
	}
	rec.lat = append(rec.lat, time.Since(start))
	rec.ttfb = append(rec.ttfb, ttfb)
	rec.events += int64(n)
	return nil
}

// dataField starts a data: line; every event of the load's streams has
// exactly one, and comment lines (": keep-alive") none.
var dataField = []byte("\ndata:")

// readEvents reads an SSE body to its end: the number of events (data:
// lines), the time from start to the first byte, and the last bytes.
func (c *client) readEvents(res *http.Response, start time.Time) (n int, ttfb time.Duration, tail []byte, err error) {
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return 0, 0, nil, fmt.Errorf("status %d: %s", res.StatusCode, b)
	}
	if cap(c.buf) < 4<<10 { // holdStreams gives 4 KiB, to hold 10 000 streams
		c.buf = make([]byte, 32<<10)
	}
	buf := c.buf[:cap(c.buf)]
	var last [64]byte // the end of the stream so far
	tailLen := 0
	// seam holds the bytes before the current read that a data: line
	// start may straddle; a stream starts as if after a line break.
	var seam [2 * 8]byte
	seam[0] = '\n'
	seamLen := 1
	for {
		k, rerr := res.Body.Read(buf)
		if k > 0 {
			if ttfb == 0 {
				ttfb = time.Since(start)
			}
			p := buf[:k]
			n += bytes.Count(p, dataField)
			head := p[:min(k, len(dataField)-1)]
			seamLen += copy(seam[seamLen:], head)
			n += bytes.Count(seam[:seamLen], dataField) // straddling ones only: each part is too short
			if k >= len(dataField)-1 {
				seamLen = copy(seam[:], p[k-(len(dataField)-1):])
			} else {
				keep := min(seamLen, len(dataField)-1)
				seamLen = copy(seam[:], seam[seamLen-keep:seamLen])
			}
			if k >= len(last) {
				tailLen = copy(last[:], p[k-len(last):])
			} else {
				keep := min(tailLen, len(last)-k)
				copy(last[:], last[tailLen-keep:tailLen])
				tailLen = keep + copy(last[keep:], p)
			}
		}
		if rerr == io.EOF {
			return n, ttfb, last[:tailLen], nil
		}
		if rerr != nil {
			return n, ttfb, last[:tailLen], rerr
		}
	}
}

// video creates a video task and polls its status once: one operation
// is the two requests.
func (c *client) video(_ *workload, base string, _ int, rec *recorder) error {
	start := time.Now()
	id, err := c.createVideo(base)
	if err != nil {
		return err
	}
	if err := c.videoStatus(base, id); err != nil {
		return err
	}
	rec.lat = append(rec.lat, time.Since(start))
	return nil
}

// poll asks for the status of a video task: one operation is one
// request. The client creates its task first, unmeasured.
func (c *client) poll(_ *workload, base string, _ int, rec *recorder) error {
	if c.polled == "" {
		id, err := c.createVideo(base)
		if err != nil {
			return err
		}
		c.polled = id
	}
	start := time.Now()
	if err := c.videoStatus(base, c.polled); err != nil {
		return err
	}
	rec.lat = append(rec.lat, time.Since(start))
	return nil
}

// createVideo creates a video task, checks that it is queued, and
// returns its id.
func (c *client) createVideo(base string) (string, error) {
	res, err := c.post(base, pathVideos, videoBody)
	if err != nil {
		return "", err
	}
	body, err := c.readAll(res)
	if err != nil {
		return "", err
	}
	var created struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(body, &created); err != nil || created.ID == "" || created.Status != "queued" {
		return "", fmt.Errorf("video create reply %.200s", body)
	}
	return created.ID, nil
}

// videoStatus asks for the status of the video task id and checks that
// the reply is about it.
func (c *client) videoStatus(base, id string) error {
	res, err := c.get(base, pathVideos+"/"+id)
	if err != nil {
		return err
	}
	body, err := c.readAll(res)
	if err != nil {
		return err
	}
	if !bytes.Contains(body, []byte(id)) {
		return fmt.Errorf("video status reply %.200s", body)
	}
	return nil
}

// loadResult is what a load run measured on the client side.
type loadResult struct {
	Ops     int64         `json:"ops"`
	Errors  int64         `json:"errors"`
	Err     string        `json:"first_error,omitempty"`
	Elapsed time.Duration `json:"elapsed_ns"`
	Events  int64         `json:"events,omitempty"`
	Lat     percentiles   `json:"latency"`
	TTFB    *percentiles  `json:"ttfb,omitempty"`
}

type percentiles struct {
	P50 time.Duration `json:"p50_ns"`
	P90 time.Duration `json:"p90_ns"`
	P99 time.Duration `json:"p99_ns"`
	Max time.Duration `json:"max_ns"`
}

func percentilesOf(d []time.Duration) percentiles {
	if len(d) == 0 {
		return percentiles{}
	}
	slices.Sort(d)
	at := func(q float64) time.Duration { return d[int(q*float64(len(d)-1))] }
	return percentiles{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: d[len(d)-1]}
}

// runLoad runs w against base with conc workers for d, each on its own
// keep-alive connection, and waits for the operations in flight at the
// end to finish. Streams must have events events. With rate > 0 the
// workers together start at most rate operations a second, evenly
// spaced (a worker that falls behind does not catch up in a burst);
// otherwise each starts its next operation as soon as one ends.
func runLoad(ctx context.Context, w *workload, base string, events, conc int, d time.Duration, rate float64) loadResult {
	tr := newTransport(conc)
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: time.Minute}
	recs := make([]recorder, conc)
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range recs {
		rec := &recs[i]
		wg.Go(func() {
			c := &client{hc: hc}
			var interval time.Duration
			next := start
			if rate > 0 {
				interval = time.Duration(float64(conc) / rate * float64(time.Second))
				next = start.Add(interval * time.Duration(i) / time.Duration(conc))
			}
			for ctx.Err() == nil {
				if interval > 0 {
					if wait := time.Until(next); wait > 0 {
						time.Sleep(wait)
						if ctx.Err() != nil {
							break
						}
					}
					next = next.Add(interval)
					if now := time.Now(); next.Before(now) {
						next = now
					}
				}
				if err := w.do(c, w, base, events, rec); err != nil {
					rec.fail(err)
					continue
				}
				rec.ops++
			}
		})
	}
	wg.Wait()
	res := loadResult{Elapsed: time.Since(start)}
	var lat, ttfb []time.Duration
	var errs []error
	for i := range recs {
		r := &recs[i]
		res.Ops += r.ops
		res.Errors += r.errs
		res.Events += r.events
		lat = append(lat, r.lat...)
		ttfb = append(ttfb, r.ttfb...)
		if r.err != nil {
			errs = append(errs, r.err)
		}
	}
	if len(errs) > 0 {
		res.Err = errs[0].Error()
	}
	res.Lat = percentilesOf(lat)
	if w.stream {
		p := percentilesOf(ttfb)
		res.TTFB = &p
	}
	return res
}
