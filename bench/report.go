package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// report is everything one run of the tool measured; -json writes it as
// it is.
type report struct {
	Config  reportConfig    `json:"config"`
	Runs    []runResult     `json:"runs"`
	Ratios  []ratio         `json:"ratios"`
	Latency []runResult     `json:"latency,omitempty"`
	Sweep   []sweepPoint    `json:"sweep,omitempty"`
	Streams []streamsResult `json:"streams,omitempty"`
	Store   *storeResult    `json:"store,omitempty"`
}

type reportConfig struct {
	Started     string  `json:"started"`
	Duration    string  `json:"duration"`
	Concurrency int     `json:"concurrency"`
	Rounds      int     `json:"rounds"`
	Rate        float64 `json:"rate,omitempty"`
	Short       bool    `json:"short"`
	Pinned      bool    `json:"pinned"`
	FileLimit   uint64  `json:"file_limit"`
}

// runResult is one scenario: a workload against a target.
type runResult struct {
	Target       string        `json:"target"`
	Workload     string        `json:"workload"`
	Clients      int           `json:"clients"`
	Load         loadResult    `json:"load"`
	OpsPerSec    float64       `json:"ops_per_sec"`
	EventsPerSec float64       `json:"events_per_sec,omitempty"`
	CPUPerOp     time.Duration `json:"cpu_per_op_ns"`
	CPUPerEvent  time.Duration `json:"cpu_per_event_ns,omitempty"`
	AllocsPerOp  float64       `json:"allocs_per_op"`
	BytesPerOp   float64       `json:"bytes_per_op"`
	IdleRSS      uint64        `json:"idle_rss_bytes,omitempty"`
	RSS          uint64        `json:"rss_bytes"`
	PeakRSS      uint64        `json:"peak_rss_bytes"`
	// AddedP50 and AddedTTFB are, in the latency runs, what a relay adds
	// to the median latency (and time to first byte) of calling the
	// upstream directly.
	AddedP50  time.Duration `json:"added_p50_ns,omitempty"`
	AddedTTFB time.Duration `json:"added_ttfb_p50_ns,omitempty"`
}

// ratio compares two targets on one workload: Of / To. Over several
// rounds, each figure is the median of the rounds' ratios, and CPUMin
// and CPUMax the range of the CPU ratio.
type ratio struct {
	Workload   string  `json:"workload"`
	Of         string  `json:"of"`
	To         string  `json:"to"`
	CPU        float64 `json:"cpu_per_op"`
	Throughput float64 `json:"throughput"`
	P50        float64 `json:"p50"`
	Allocs     float64 `json:"allocs_per_op"`
	CPUMin     float64 `json:"cpu_per_op_min,omitempty"`
	CPUMax     float64 `json:"cpu_per_op_max,omitempty"`
}

// ratioPairs are the comparisons of the issues: the gateway against the
// floor, the gateway on its SQLite file and the gateway with its metrics
// against the gateway in memory, relays against the naive relays.
var ratioPairs = [][2]string{
	{"gateway", "floor"},
	{"gateway-sqlite", "gateway"},
	{"gateway-metrics", "gateway"},
	{"gateway-relay", "naive-relay"},
	{"gateway-relay", "copy-relay"},
	{"naive-relay", "floor"},
	{"copy-relay", "floor"},
}

func (rep *report) run(t, w string) *runResult {
	for i := range rep.Runs {
		if r := &rep.Runs[i]; r.Target == t && r.Workload == w {
			return r
		}
	}
	return nil
}

// ratiosOf returns the ratios of ratioPairs between the runs of one round.
func ratiosOf(runs []runResult) []ratio {
	find := func(t, w string) *runResult {
		for i := range runs {
			if r := &runs[i]; r.Target == t && r.Workload == w {
				return r
			}
		}
		return nil
	}
	var out []ratio
	for _, w := range workloads {
		for _, p := range ratioPairs {
			of, to := find(p[0], w.name), find(p[1], w.name)
			if of == nil || to == nil || to.CPUPerOp == 0 || to.OpsPerSec == 0 || to.Load.Lat.P50 == 0 || to.AllocsPerOp == 0 {
				continue
			}
			out = append(out, ratio{
				Workload: w.name, Of: p[0], To: p[1],
				CPU:        float64(of.CPUPerOp) / float64(to.CPUPerOp),
				Throughput: of.OpsPerSec / to.OpsPerSec,
				P50:        float64(of.Load.Lat.P50) / float64(to.Load.Lat.P50),
				Allocs:     of.AllocsPerOp / to.AllocsPerOp,
			})
		}
	}
	return out
}

// setRounds sets the runs and ratios of the report from the runs of
// each round (every round runs the same scenarios in the same order).
// One round is reported as it is. Of several, each scenario is reported
// by its median round by CPU per operation, and each ratio by the median
// of the rounds' ratios, taken within each round, with the range of its
// CPU ratio.
func (rep *report) setRounds(rounds [][]runResult) {
	if len(rounds) == 1 {
		rep.Runs, rep.Ratios = rounds[0], ratiosOf(rounds[0])
		return
	}
	rep.Runs = nil
	for i := range rounds[0] {
		runs := make([]runResult, len(rounds))
		for k := range rounds {
			runs[k] = rounds[k][i]
		}
		slices.SortFunc(runs, func(a, b runResult) int { return cmp.Compare(a.CPUPerOp, b.CPUPerOp) })
		rep.Runs = append(rep.Runs, runs[len(runs)/2])
	}
	perRound := make([][]ratio, len(rounds))
	for k, runs := range rounds {
		perRound[k] = ratiosOf(runs)
	}
	rep.Ratios = nil
	for i, r := range perRound[0] {
		figure := func(f func(ratio) float64) []float64 {
			v := make([]float64, len(perRound))
			for k := range perRound {
				v[k] = f(perRound[k][i])
			}
			slices.Sort(v)
			return v
		}
		cpu := figure(func(r ratio) float64 { return r.CPU })
		r.CPU, r.CPUMin, r.CPUMax = median(cpu), cpu[0], cpu[len(cpu)-1]
		r.Throughput = median(figure(func(r ratio) float64 { return r.Throughput }))
		r.P50 = median(figure(func(r ratio) float64 { return r.P50 }))
		r.Allocs = median(figure(func(r ratio) float64 { return r.Allocs }))
		rep.Ratios = append(rep.Ratios, r)
	}
}

// median returns the median of the sorted values v: the mean of the two
// middle ones when there is an even number.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

func us(d time.Duration) string {
	return fmt.Sprintf("%.0f", float64(d)/1e3)
}

func mib(b uint64) string {
	return fmt.Sprintf("%.1f", float64(b)/(1<<20))
}

func (rep *report) writeTables(w io.Writer) {
	c := rep.Config
	rate := "as fast as they go"
	if c.Rate > 0 {
		rate = fmt.Sprintf("at most %.0f ops/s", c.Rate)
	}
	rounds := ""
	if c.Rounds > 1 {
		rounds = fmt.Sprintf(", %d rounds (each scenario's median round below)", c.Rounds)
	}
	fmt.Fprintf(w, "gatewaykit load tool, %s: %s per scenario%s, %d clients %s, pinned=%v, open-file limit %d\n\n",
		c.Started, c.Duration, rounds, c.Concurrency, rate, c.Pinned, c.FileLimit)
	if len(rep.Runs) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "scenario\tclients\tops/s\tevents/s\tp50 µs\tp90 µs\tp99 µs\tmax µs\tttfb p50\tttfb p99\tCPU µs/op\tCPU µs/event\tallocs/op\tKB/op\tRSS MB idle\tRSS MB end\terrors\t")
		for _, r := range rep.Runs {
			ttfb50, ttfb99, evs, cpuev := "", "", "", ""
			if r.Load.TTFB != nil {
				ttfb50, ttfb99 = us(r.Load.TTFB.P50), us(r.Load.TTFB.P99)
				evs = fmt.Sprintf("%.0f", r.EventsPerSec)
				cpuev = fmt.Sprintf("%.2f", float64(r.CPUPerEvent)/1e3)
			}
			l := r.Load.Lat
			fmt.Fprintf(tw, "%s/%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.1f\t%s\t%.1f\t%.1f\t%s\t%s\t%d\t\n",
				r.Target, r.Workload, r.Clients, r.OpsPerSec, evs, us(l.P50), us(l.P90), us(l.P99), us(l.Max),
				ttfb50, ttfb99, float64(r.CPUPerOp)/1e3, cpuev, r.AllocsPerOp, r.BytesPerOp/1e3, mib(r.IdleRSS), mib(r.RSS), r.Load.Errors)
		}
		tw.Flush()
		fmt.Fprintln(w, "(video: one op is a create and one status poll; streams: latency to the last byte, ttfb to the first)")
		for _, r := range rep.Runs {
			if r.Load.Err != "" {
				fmt.Fprintf(w, "  %s/%s first error: %s\n", r.Target, r.Workload, r.Load.Err)
			}
		}
		fmt.Fprintln(w)
	}
	if len(rep.Ratios) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		head := "ratio\tworkload\tCPU/op\tops/s\tp50\tallocs/op\t"
		if c.Rounds > 1 {
			head = fmt.Sprintf("ratio, median of %d rounds\tworkload\tCPU/op\tCPU/op range\tops/s\tp50\tallocs/op\t", c.Rounds)
		}
		fmt.Fprintln(tw, head)
		for _, r := range rep.Ratios {
			cpuRange := ""
			if c.Rounds > 1 {
				cpuRange = fmt.Sprintf("%.2f–%.2f×\t", r.CPUMin, r.CPUMax)
			}
			fmt.Fprintf(tw, "%s / %s\t%s\t%.2f×\t%s%.2f×\t%.2f×\t%.1f×\t\n", r.Of, r.To, r.Workload, r.CPU, cpuRange, r.Throughput, r.P50, r.Allocs)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	if len(rep.Latency) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "latency, 1 client	p50 µs	p90 µs	p99 µs	ttfb p50	added p50	added ttfb	errors	")
		for _, r := range rep.Latency {
			ttfb, added, addedTTFB := "", "", ""
			if r.Load.TTFB != nil {
				ttfb = us(r.Load.TTFB.P50)
			}
			if r.Target != "upstream-direct" {
				added = us(r.AddedP50)
				if r.Load.TTFB != nil {
					addedTTFB = us(r.AddedTTFB)
				}
			}
			l := r.Load.Lat
			fmt.Fprintf(tw, "%s/%s	%s	%s	%s	%s	%s	%s	%d	\n", r.Target, r.Workload, us(l.P50), us(l.P90), us(l.P99),
				ttfb, added, addedTTFB, r.Load.Errors)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	if len(rep.Sweep) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "sweep (chat)\tclients\tops/s\tvs 32 clients\tp50 µs\tp99 µs\tmax µs\tCPU µs/op\terrors\t")
		for _, p := range rep.Sweep {
			rel := ""
			if p.Relative > 0 {
				rel = fmt.Sprintf("%.0f%%", p.Relative*100)
			}
			l := p.Load.Lat
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t%s\t%s\t%s\t%s\t%.1f\t%d\t\n", p.Target, p.Clients, p.OpsPerSec, rel,
				us(l.P50), us(l.P99), us(l.Max), float64(p.CPUPerOp)/1e3, p.Load.Errors)
		}
		tw.Flush()
		for _, p := range rep.Sweep {
			if p.Load.Err != "" {
				fmt.Fprintf(w, "  %s at %d clients, first error: %s\n", p.Target, p.Clients, p.Load.Err)
			}
		}
		fmt.Fprintln(w)
	}
	if len(rep.Streams) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "open streams\tstreams\topen at once\topen in\tKB heap/stream\tKB RSS/stream\tcompleted\terrors\tgoroutines before/open/after\t")
		for _, s := range rep.Streams {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.1f\t%.1f\t%d\t%d\t%d/%d/%d\t\n", s.Target, s.Streams, s.OpenAtOnce,
				s.OpenIn.Round(time.Millisecond), s.HeapPerStream/1e3, s.RSSPerStream/1e3, s.Completed, s.Errors,
				s.GoroutinesBefore, s.GoroutinesOpen, s.GoroutinesAfter)
		}
		tw.Flush()
		for _, s := range rep.Streams {
			if s.Err != "" {
				fmt.Fprintf(w, "  %s first error: %s\n", s.Target, s.Err)
			}
		}
		fmt.Fprintln(w)
	}
	if s := rep.Store; s != nil {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "store\titems\theap MiB\tB/item\t")
		for _, it := range s.Items {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.0f\t\n", it.Name, it.Items, float64(it.HeapBytes)/(1<<20), it.BytesPerItem)
		}
		tw.Flush()
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "key lookup\tkeys\tns/lookup\t")
		for _, l := range s.Lookups {
			fmt.Fprintf(tw, "%s\t%d\t%.0f\t\n", l.Name, l.Keys, l.NsPerLookup)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
}
