package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMain lets the test binary serve as the tool's server children: the
// tool re-executes its own binary, which here is the test binary.
func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(childMain(role, os.Args[1:]))
	}
	if os.Getenv(externalTestEnv) != "" {
		os.Exit(externalTestServer())
	}
	os.Exit(m.Run())
}

// externalTestEnv makes the test binary an external server of
// TestExternalServer: the demo gateway, printing its URL, until SIGTERM.
const externalTestEnv = "GATEWAYKIT_BENCH_TEST_EXTERNAL"

func externalTestServer() int {
	h, _, cleanup, err := newRole(roleGateway, "", 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("test server on http://%s\n", ln.Addr())
	<-ctx.Done()
	_ = srv.Close()
	return 0
}

// TestExternalServer loads a server started by -server with every
// workload, next to nothing else, and reads its CPU time and RSS.
func TestExternalServer(t *testing.T) {
	var out bytes.Buffer
	exe, err := os.Executable()
	require.NoError(t, err)
	args := []string{"-short", "-json", "-scenario", "^ext/", "-server", "ext=" + externalTestEnv + "=1 exec " + exe}
	require.NoError(t, run(t.Context(), args, &out))
	var rep report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	require.Len(t, rep.Runs, len(workloads))
	for _, w := range workloads {
		r := rep.run("ext", w.name)
		require.NotNil(t, r, "ext/%s did not run", w.name)
		require.Positive(t, r.Load.Ops, "ext/%s made no request", w.name)
		require.Zero(t, r.Load.Errors, "ext/%s: %s", w.name, r.Load.Err)
		require.Positive(t, r.RSS, "ext/%s: RSS from /proc", w.name)
		require.GreaterOrEqual(t, r.CPUPerOp, time.Duration(0), "ext/%s", w.name)
	}
}

// TestShortRun runs the whole tool in -short mode, as a smoke test that
// keeps it working: every scenario, the sweep, the open streams and the
// stores produce figures, and nothing fails. It asserts no timing.
func TestShortRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-short", "-json", "-sweep", "-streams", "100", "-store"}, &out))

	var rep report
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep), out.String())
	require.True(t, rep.Config.Short)

	runs := 0
	for _, w := range workloads {
		for _, tg := range targets {
			if !tg.serves(w.name) {
				continue
			}
			runs++
			r := rep.run(tg.name, w.name)
			require.NotNil(t, r, "%s/%s did not run", tg.name, w.name)
			require.Positive(t, r.Load.Ops, "%s/%s made no request", tg.name, w.name)
			require.Zero(t, r.Load.Errors, "%s/%s: %s", tg.name, w.name, r.Load.Err)
			require.Positive(t, r.CPUPerOp, "%s/%s", tg.name, w.name)
			require.Positive(t, r.AllocsPerOp, "%s/%s", tg.name, w.name)
			require.Positive(t, r.RSS, "%s/%s", tg.name, w.name)
			require.Positive(t, r.Load.Lat.P50, "%s/%s", tg.name, w.name)
			require.LessOrEqual(t, r.Load.Lat.P50, r.Load.Lat.Max, "%s/%s", tg.name, w.name)
			if w.stream {
				require.NotNil(t, r.Load.TTFB, "%s/%s", tg.name, w.name)
				require.Positive(t, r.Load.Events, "%s/%s", tg.name, w.name)
				require.Zero(t, r.Load.Events%r.Load.Ops, "%s/%s: every stream has the same events", tg.name, w.name)
				if w.name == "stream" {
					require.Equal(t, r.Load.Ops*streamEvents, r.Load.Events, "%s/%s", tg.name, w.name)
				}
			}
		}
	}
	require.Len(t, rep.Runs, runs)
	require.NotEmpty(t, rep.Ratios)

	require.Len(t, rep.Latency, 2*4) // chat and stream: direct, three relays
	for _, r := range rep.Latency {
		require.Positive(t, r.Load.Ops, "latency %s/%s", r.Target, r.Workload)
		require.Zero(t, r.Load.Errors, "latency %s/%s: %s", r.Target, r.Workload, r.Load.Err)
		require.Equal(t, 1, r.Clients)
	}

	require.Len(t, rep.Sweep, len(targets)*2)
	for _, p := range rep.Sweep {
		require.Positive(t, p.Load.Ops, "sweep %s at %d clients", p.Target, p.Clients)
		require.Zero(t, p.Load.Errors, "sweep %s at %d clients: %s", p.Target, p.Clients, p.Load.Err)
	}

	require.NotEmpty(t, rep.Streams)
	for _, s := range rep.Streams {
		require.Equal(t, int64(100), s.Completed, "%s: %s", s.Target, s.Err)
		require.Zero(t, s.Errors, "%s: %s", s.Target, s.Err)
		require.Positive(t, s.OpenAtOnce, s.Target)
		require.LessOrEqual(t, s.GoroutinesAfter, s.GoroutinesBefore, "%s left goroutines behind", s.Target)
	}

	require.NotNil(t, rep.Store)
	for _, it := range rep.Store.Items {
		require.Positive(t, it.BytesPerItem, it.Name)
	}
	require.Len(t, rep.Store.Lookups, 2)
	for _, l := range rep.Store.Lookups {
		require.Positive(t, l.NsPerLookup, l.Name)
	}
}

// TestFlags checks that bad flags are errors, not panics.
func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-concurrency", "0"},
		{"-rate", "-1"},
		{"-rounds", "0"},
		{"-scenario", "("},
		{"extra"},
		{"-nosuchflag"},
		{"-server", "no-command"},
		{"-server", "a/b=exec true"},
	} {
		_, err := parseFlags(args, &bytes.Buffer{})
		require.Error(t, err, "%q", args)
	}
}

// TestReadEventsCountsDataLines checks the load's event counter against
// streams cut at every possible place: comments do not count, events
// whose data: line straddles two reads count once.
func TestReadEventsCountsDataLines(t *testing.T) {
	stream := ": keep-alive\n\ndata: {\"a\":1}\n\nevent: x\ndata: {\"b\":2}\n\n: keep-alive\n\ndata: [DONE]\n\n"
	for _, tc := range []struct {
		name string
		r    func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte at a time", iotest.OneByteReader},
		{"half", iotest.HalfReader},
		{"data first", func(io.Reader) io.Reader { return strings.NewReader(stream[len(": keep-alive\n\n"):]) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(tc.r(strings.NewReader(stream)))}
			n, _, tail, err := (&client{}).readEvents(res, time.Now())
			require.NoError(t, err)
			require.Equal(t, 3, n)
			require.True(t, strings.HasSuffix(string(tail), "data: [DONE]\n\n"), "%q", tail)
		})
	}
}

// TestSetRounds checks how several rounds are reported: each scenario by
// its median round by CPU per operation, each ratio by the median of the
// ratios taken within each round, with the range of its CPU ratio.
func TestSetRounds(t *testing.T) {
	run := func(target string, cpu time.Duration, ops float64) runResult {
		return runResult{Target: target, Workload: "chat", CPUPerOp: cpu, OpsPerSec: ops, AllocsPerOp: 10,
			Load: loadResult{Lat: percentiles{P50: time.Millisecond}}}
	}
	rounds := [][]runResult{
		{run("gateway", 30*time.Microsecond, 900), run("floor", 20*time.Microsecond, 1000)}, // 1.5×
		{run("gateway", 90*time.Microsecond, 300), run("floor", 30*time.Microsecond, 1000)}, // 3× (a noisy round)
		{run("gateway", 40*time.Microsecond, 800), run("floor", 32*time.Microsecond, 1000)}, // 1.25×
	}
	var rep report
	rep.setRounds(rounds)
	require.Len(t, rep.Runs, 2)
	require.Equal(t, 40*time.Microsecond, rep.run("gateway", "chat").CPUPerOp, "the median round of gateway/chat")
	require.Equal(t, 30*time.Microsecond, rep.run("floor", "chat").CPUPerOp, "the median round of floor/chat")
	require.Len(t, rep.Ratios, 1)
	r := rep.Ratios[0]
	require.Equal(t, [2]string{"gateway", "floor"}, [2]string{r.Of, r.To})
	require.InDelta(t, 1.5, r.CPU, 1e-9, "the median of 1.5, 3 and 1.25, not a ratio of medians (40/30)")
	require.InDelta(t, 1.25, r.CPUMin, 1e-9)
	require.InDelta(t, 3, r.CPUMax, 1e-9)
	require.InDelta(t, 0.8, r.Throughput, 1e-9)

	var one report
	one.setRounds(rounds[:1])
	require.Equal(t, rounds[0], one.Runs, "one round is reported as it is")
	require.InDelta(t, 1.5, one.Ratios[0].CPU, 1e-9)
	require.Zero(t, one.Ratios[0].CPUMax, "no range for one round")
}
