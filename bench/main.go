// Command bench is gatewaykit's load tool: it measures, side by side in one
// run and on loopback only, what the gateway costs per request next to the
// cheapest net/http server that writes the same bytes (the floor), and what
// relaying costs next to two naive relays: an httputil.ReverseProxy
// (naive-relay) and a loop that copies the upstream's bytes and flushes
// after every read (copy-relay).
//
//	go run ./bench                      # every scenario, 5s each, 32 clients
//	go run ./bench -pin -duration 10s   # server on CPU 0, load on CPU 1
//	go run ./bench -scenario 'gateway/chat|floor/chat' -concurrency 64
//	go run ./bench -rate 4000 -scenario '/chat$'   # every server at the same rate
//	go run ./bench -rounds 5 -scenario '(copy|gateway)-relay/stream'   # medians of alternating rounds
//	go run ./bench -sweep               # 1…2048 clients, non-streaming chat
//	go run ./bench -streams 10000       # open paced streams: memory per stream
//	go run ./bench -store               # memory per stored item, key lookups
//	go run ./bench -short               # a few seconds, all of it (smoke test)
//	go run ./bench -json > bench.json   # the same figures for machines
//	go run ./bench -scenario '^pg/' -server 'pg=exec ./server -addr 127.0.0.1:0 -db postgres://…'
//	                                    # an external server (see external.go)
//
// Each server runs in a child process (this program re-executed), so that
// its CPU time, allocations and RSS are its own: the tool reads them from
// the child's loopback debug endpoint (getrusage, runtime/metrics,
// /proc/self/status), which also serves pprof (-profile). See BENCHMARKS.md,
// section "load tool", for what each scenario sends and the figures.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"time"
)

// fileLimit is the open-file limit that the tool and its servers ask
// for: 2048 clients, or 10 000 streams relayed (two sockets each).
const fileLimit = 65536

func main() {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(childMain(role, os.Args[1:]))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type options struct {
	duration    time.Duration
	warmup      time.Duration
	concurrency int
	short       bool
	pin         bool
	runs        bool
	rounds      int
	rate        float64
	scenario    *regexp.Regexp
	sweep       bool
	streams     int
	streamPace  time.Duration
	store       bool
	jsonOut     bool
	profile     string
	servers     externalFlag
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "load duration of each scenario (and of each sweep point)")
	fs.IntVar(&o.concurrency, "concurrency", 32, "concurrent keep-alive clients")
	fs.Float64Var(&o.rate, "rate", 0, "start at most this many operations a second in each scenario, to compare servers at the same rate (0: as fast as they go)")
	fs.BoolVar(&o.short, "short", false, "run everything in a few seconds, with small sizes (smoke test)")
	fs.BoolVar(&o.runs, "runs", true, "run the scenarios and the one-client latencies (-runs=false: only what -sweep, -streams and -store ask for)")
	fs.IntVar(&o.rounds, "rounds", 1, "run the scenarios this many times, each round through every target in turn, and report each scenario's median round and the median (and range) of the rounds' ratios")
	fs.BoolVar(&o.pin, "pin", false, "pin the servers under test to CPU 0, and the load (and the fake upstream) to CPU 1")
	filter := fs.String("scenario", "", "run only the scenarios whose name (target/workload, e.g. gateway/chat) matches this regexp")
	fs.BoolVar(&o.sweep, "sweep", false, "also run the concurrency sweep (1, 8, 32, 64, 512, 2048 clients) of non-streaming chat")
	fs.IntVar(&o.streams, "streams", 0, "also hold this many paced streams open at once and measure memory per stream")
	fs.DurationVar(&o.streamPace, "stream-pace", 500*time.Millisecond, "pause before each event of the -streams streams")
	fs.BoolVar(&o.store, "store", false, "also measure memory per stored item and key lookup cost (in process)")
	fs.BoolVar(&o.jsonOut, "json", false, "write the report as JSON instead of tables")
	fs.Var(&o.servers, "server", "also load the server that this shell command starts, as NAME=COMMAND (repeatable; see external.go): a fresh process per scenario, BENCH_UPSTREAM set to the fake upstream")
	fs.StringVar(&o.profile, "profile", "", "save CPU and allocation profiles of the gateway's scenarios (and of copy-relay's, to compare) into this directory")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.scenario, err = regexp.Compile(*filter); err != nil {
		return nil, fmt.Errorf("-scenario: %w", err)
	}
	if o.concurrency < 1 {
		return nil, errors.New("-concurrency must be at least 1")
	}
	if o.rounds < 1 {
		return nil, errors.New("-rounds must be at least 1")
	}
	if o.rate < 0 {
		return nil, errors.New("-rate must not be negative")
	}
	if o.short {
		o.duration = min(o.duration, 100*time.Millisecond)
		o.concurrency = min(o.concurrency, 8)
		if o.streams > 200 {
			o.streams = 200
		}
		o.streamPace = min(o.streamPace, 5*time.Millisecond)
	}
	o.warmup = min(o.duration/5, time.Second)
	return o, nil
}

// run is the load tool: it parses args, runs what they ask for, and
// writes the report to stdout.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	o, err := parseFlags(args, os.Stderr)
	if err != nil {
		return err
	}
	limit, err := raiseFileLimit(fileLimit)
	if err != nil {
		return err
	}
	if o.pin {
		if err := pinProcess(1); err != nil {
			return err
		}
	}
	if o.profile != "" {
		if err := os.MkdirAll(o.profile, 0o755); err != nil {
			return err
		}
	}
	rep := &report{Config: reportConfig{
		Duration: o.duration.String(), Concurrency: o.concurrency, Rounds: o.rounds, Rate: o.rate, Short: o.short,
		Pinned: o.pin, FileLimit: limit, Started: time.Now().UTC().Format(time.RFC3339),
	}}
	b := &bench{o: o, rep: rep, progress: os.Stderr}
	if err := b.all(ctx); err != nil {
		return err
	}
	if o.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	rep.writeTables(stdout)
	return nil
}

// bench holds one run of the tool.
type bench struct {
	o        *options
	rep      *report
	progress io.Writer
	upstream *child
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.progress, "bench: "+format+"\n", args...)
}

// serverCPU is the CPU that the servers under test are pinned to (-1:
// none), and loadCPU that of the load and the fake upstream.
func (b *bench) serverCPU() int {
	if b.o.pin {
		return 0
	}
	return -1
}

func (b *bench) loadCPU() int {
	if b.o.pin {
		return 1
	}
	return -1
}

func (b *bench) all(ctx context.Context) error {
	up, err := startChild(roleUpstream, b.loadCPU())
	if err != nil {
		return err
	}
	b.upstream = up
	defer up.stop()

	if b.o.runs {
		if err := b.scenarios(ctx); err != nil {
			return err
		}
		if err := b.latency(ctx); err != nil {
			return err
		}
	}
	if b.o.sweep {
		if err := b.runSweep(ctx); err != nil {
			return err
		}
	}
	if b.o.streams > 0 {
		if err := b.runStreams(ctx); err != nil {
			return err
		}
	}
	if b.o.store {
		if err := b.runStore(ctx); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// A target is a server under test.
type target struct {
	name string
	role string
	// relay targets forward to the fake upstream.
	relay bool
	// skip lists the workloads that the target does not serve.
	skip []string
	// cmd starts an external server (-server).
	cmd string
}

var targets = []target{
	{name: "floor", role: roleFloor},
	{name: "gateway", role: roleGateway},
	{name: "gateway-sqlite", role: roleGatewaySQLite},
	{name: "gateway-metrics", role: roleGatewayMetrics},
	{name: "naive-relay", role: roleNaive, relay: true},
	{name: "copy-relay", role: roleCopy, relay: true},
	{name: "gateway-relay", role: roleGatewayRelay, relay: true},
}

func (t target) serves(w string) bool {
	return !slices.Contains(t.skip, w)
}

// start starts t's server as a child process, with extra flags.
func (b *bench) start(t target, extra ...string) (*child, error) {
	if t.cmd != "" {
		return startExternal(t.name, t.cmd, b.upstream.addr)
	}
	var args []string
	if t.relay {
		args = append(args, "-upstream", b.upstream.addr)
	}
	return startChild(t.role, b.serverCPU(), append(args, extra...)...)
}

// scenarios runs every workload against every target that the -scenario
// filter lets through, -rounds times, then computes the ratios. Each
// round runs every target in turn, so that the targets that a ratio
// compares are measured close together, and a ratio is taken within a
// round before its median across rounds.
func (b *bench) scenarios(ctx context.Context) error {
	all := slices.Clone(targets)
	for _, s := range b.o.servers {
		all = append(all, target{name: s.name, cmd: s.cmd})
	}
	rounds := make([][]runResult, b.o.rounds)
	for round := range rounds {
		for i := range workloads {
			w := &workloads[i]
			for _, t := range all {
				name := t.name + "/" + w.name
				if !t.serves(w.name) || !b.o.scenario.MatchString(name) {
					continue
				}
				if err := ctx.Err(); err != nil {
					return err
				}
				if b.o.rounds > 1 {
					b.logf("round %d of %d", round+1, b.o.rounds)
				}
				r, err := b.scenario(ctx, t, w, b.o.concurrency)
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				rounds[round] = append(rounds[round], r)
			}
		}
	}
	b.rep.setRounds(rounds)
	return nil
}

// latency measures, with one client, the latency that each relay adds to
// calling the upstream directly, for chat and the chat stream.
func (b *bench) latency(ctx context.Context) error {
	direct := target{name: "upstream-direct", role: roleUpstream}
	for _, name := range []string{"chat", "stream"} {
		w, _ := workloadByName(name)
		if !slices.ContainsFunc(targets, func(t target) bool { return t.relay && b.o.scenario.MatchString(t.name+"/"+name) }) {
			continue
		}
		var base *runResult
		for _, t := range append([]target{direct}, targets...) {
			// The direct baseline always runs, unless no relay does.
			if !t.relay && t.name != direct.name || t.relay && !b.o.scenario.MatchString(t.name+"/"+name) {
				continue
			}
			var r runResult
			var err error
			if t.name == direct.name {
				r, err = b.measureOn(ctx, b.upstream, &w, 1)
			} else {
				r, err = b.scenario(ctx, t, &w, 1)
			}
			if err != nil {
				return fmt.Errorf("latency %s/%s: %w", t.name, name, err)
			}
			r.Target, r.Workload = t.name, name
			if base == nil {
				base = &r
			} else {
				r.AddedP50 = r.Load.Lat.P50 - base.Load.Lat.P50
				if r.Load.TTFB != nil && base.Load.TTFB != nil {
					r.AddedTTFB = r.Load.TTFB.P50 - base.Load.TTFB.P50
				}
			}
			b.rep.Latency = append(b.rep.Latency, r)
		}
	}
	return nil
}

// measureOn runs a workload against a running child: probe, warm-up,
// measurement.
func (b *bench) measureOn(ctx context.Context, c *child, w *workload, conc int) (runResult, error) {
	events := 0
	var err error
	if w.stream {
		if events, err = probe(w, c.addr); err != nil {
			return runResult{}, err
		}
	}
	b.logf("%s/%s: %d clients for %s", c.role, w.name, conc, b.o.duration)
	runLoad(ctx, w, c.addr, events, conc, b.o.warmup, 0)
	return measure(ctx, c, w, events, conc, b.o.duration, 0)
}

// scenario runs one workload against a fresh server process.
func (b *bench) scenario(ctx context.Context, t target, w *workload, conc int) (runResult, error) {
	c, err := b.start(t)
	if err != nil {
		return runResult{}, err
	}
	defer c.stop()
	idle, err := c.stats(true)
	if err != nil {
		return runResult{}, err
	}
	events := 0
	if w.stream {
		if events, err = probe(w, c.addr); err != nil {
			return runResult{}, err
		}
	}
	b.logf("%s/%s: %d clients for %s", t.name, w.name, conc, b.o.duration)
	rate := b.o.rate
	if conc != b.o.concurrency {
		rate = 0 // the one-client latencies
	}
	runLoad(ctx, w, c.addr, events, conc, b.o.warmup, rate)

	var profErr chan error
	if b.o.profile != "" && (t.role == roleGateway || t.role == roleGatewaySQLite || t.role == roleGatewayMetrics || t.role == roleGatewayRelay || t.role == roleCopy) && conc == b.o.concurrency {
		profErr = make(chan error, 1)
		path := filepath.Join(b.o.profile, t.name+"-"+w.name)
		go func() { profErr <- c.profile(b.o.duration, path) }()
	}
	r, err := measure(ctx, c, w, events, conc, b.o.duration, rate)
	if err != nil {
		return r, err
	}
	if profErr != nil {
		if err := <-profErr; err != nil {
			return r, fmt.Errorf("profile: %w", err)
		}
	}
	r.Target, r.Workload, r.IdleRSS = t.name, w.name, idle.RSS
	return r, nil
}

// measure runs the load once and turns the server's counters into
// per-operation costs.
func measure(ctx context.Context, c *child, w *workload, events, conc int, d time.Duration, rate float64) (runResult, error) {
	before, err := c.stats(false)
	if err != nil {
		return runResult{}, err
	}
	res := runLoad(ctx, w, c.addr, events, conc, d, rate)
	after, err := c.stats(false)
	if err != nil {
		return runResult{}, err
	}
	r := runResult{Clients: conc, Load: res, RSS: after.RSS, PeakRSS: after.PeakRSS}
	secs := res.Elapsed.Seconds()
	r.OpsPerSec = float64(res.Ops) / secs
	r.EventsPerSec = float64(res.Events) / secs
	if ops := float64(res.Ops); ops > 0 {
		r.CPUPerOp = time.Duration((after.CPUSeconds - before.CPUSeconds) / ops * 1e9)
		r.AllocsPerOp = float64(after.AllocObjects-before.AllocObjects) / ops
		r.BytesPerOp = float64(after.AllocBytes-before.AllocBytes) / ops
		if res.Events > 0 {
			r.CPUPerEvent = time.Duration((after.CPUSeconds - before.CPUSeconds) / float64(res.Events) * 1e9)
		}
	}
	return r, nil
}
