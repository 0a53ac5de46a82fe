package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"syscall"
	"unsafe"
)

// procStats is what a server process reports about itself on its debug
// endpoint: the counters that the load tool turns into per-request costs.
type procStats struct {
	// CPUSeconds is the user and system CPU time of the process so far.
	CPUSeconds float64 `json:"cpu_seconds"`
	// AllocObjects and AllocBytes are the heap allocations of the process
	// so far (runtime/metrics /gc/heap/allocs).
	AllocObjects uint64 `json:"alloc_objects"`
	AllocBytes   uint64 `json:"alloc_bytes"`
	// Goroutines is the number of live goroutines.
	Goroutines uint64 `json:"goroutines"`
	// HeapBytes is the heap in use by objects (live and not yet swept);
	// right after a GC (debug endpoint ?gc=1) it is the live heap.
	HeapBytes uint64 `json:"heap_bytes"`
	// RSS and PeakRSS are VmRSS and VmHWM of /proc/self/status.
	RSS     uint64 `json:"rss_bytes"`
	PeakRSS uint64 `json:"peak_rss_bytes"`
}

var statMetrics = []string{
	"/gc/heap/allocs:objects",
	"/gc/heap/allocs:bytes",
	"/sched/goroutines:goroutines",
	"/memory/classes/heap/objects:bytes",
}

// readProcStats reads the counters of the calling process; with gc it
// first runs a garbage collection, so that HeapBytes is the live heap.
func readProcStats(gc bool) (procStats, error) {
	if gc {
		runtime.GC()
	}
	var st procStats
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return st, fmt.Errorf("getrusage: %w", err)
	}
	st.CPUSeconds = tvSeconds(ru.Utime) + tvSeconds(ru.Stime)

	samples := make([]metrics.Sample, len(statMetrics))
	for i, name := range statMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	st.AllocObjects = samples[0].Value.Uint64()
	st.AllocBytes = samples[1].Value.Uint64()
	st.Goroutines = samples[2].Value.Uint64()
	st.HeapBytes = samples[3].Value.Uint64()

	var err error
	st.RSS, st.PeakRSS, err = readRSS()
	return st, err
}

func tvSeconds(tv syscall.Timeval) float64 {
	return float64(tv.Sec) + float64(tv.Usec)/1e6
}

// readRSS returns VmRSS and VmHWM of /proc/self/status, in bytes.
func readRSS() (rss, peak uint64, err error) { return readRSSOf("/proc/self/status") }

// readRSSOf returns VmRSS and VmHWM of a /proc/PID/status file, in bytes.
func readRSSOf(path string) (rss, peak uint64, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		var dst *uint64
		switch {
		case bytes.HasPrefix(line, []byte("VmRSS:")):
			dst = &rss
		case bytes.HasPrefix(line, []byte("VmHWM:")):
			dst = &peak
		default:
			continue
		}
		// "VmRSS:	   12345 kB"
		fields := bytes.Fields(line)
		if len(fields) != 3 || string(fields[2]) != "kB" {
			return 0, 0, fmt.Errorf("/proc/self/status: unexpected line %q", line)
		}
		kb, err := strconv.ParseUint(string(fields[1]), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/self/status: %q: %w", line, err)
		}
		*dst = kb << 10
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("/proc/self/status: no VmRSS line")
	}
	return rss, peak, nil
}

// raiseFileLimit raises the soft limit on open files to at least want
// (and to the hard limit, raising that too when the process may). It
// returns the soft limit in force afterwards.
func raiseFileLimit(want uint64) (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("getrlimit: %w", err)
	}
	if lim.Max < want {
		// Raising the hard limit needs CAP_SYS_RESOURCE; try, and fall
		// back to the hard limit as it is.
		raised := syscall.Rlimit{Cur: want, Max: want}
		if syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised) == nil {
			return want, nil
		}
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			return 0, fmt.Errorf("setrlimit: %w", err)
		}
	}
	return lim.Cur, nil
}

// pinProcess restricts every thread of the calling process to CPU cpu,
// as taskset -p would. Threads that the runtime starts later inherit the
// mask of the thread that creates them, so the whole process stays there.
func pinProcess(cpu int) error {
	// runtime.NumCPU counts the CPUs of the affinity mask that the
	// process inherited, which may already be one; the kernel says
	// EINVAL for a CPU that is not there.
	var mask [16]uint64 // 1024 CPUs
	if cpu < 0 || cpu >= len(mask)*64 {
		return fmt.Errorf("pin: no CPU %d", cpu)
	}
	mask[cpu/64] = 1 << (cpu % 64)
	entries, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	for _, e := range entries {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETAFFINITY,
			uintptr(tid), unsafe.Sizeof(mask), uintptr(unsafe.Pointer(&mask)))
		if errno != 0 && errno != syscall.ESRCH { // ESRCH: the thread has exited
			return fmt.Errorf("pin: sched_setaffinity(%d): %w", tid, errno)
		}
	}
	return nil
}
