package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// An external server under test: -server NAME=COMMAND runs each workload
// against a fresh process that COMMAND starts, side by side with the
// built-in targets. COMMAND is run by sh -c with BENCH_UPSTREAM set to
// the fake upstream's base URL (for relay configurations); it must exec
// the server (so that its process is the one measured) and the server
// must print its base URL (http://…) on a line of its standard output
// once it listens. Its CPU time and RSS are read from /proc/PID; its
// allocations are not known (0). The example server fits:
//
//	-server 'pg=exec ./server -addr 127.0.0.1:0 -db postgres://… -rate-limit 1000000000/s'
type externalServer struct {
	name, cmd string
}

// externalFlag collects the -server flags.
type externalFlag []externalServer

func (f *externalFlag) String() string { return fmt.Sprint(*f) }

func (f *externalFlag) Set(v string) error {
	name, cmd, ok := strings.Cut(v, "=")
	if !ok || name == "" || cmd == "" || strings.Contains(name, "/") {
		return fmt.Errorf("want NAME=COMMAND, with no / in NAME")
	}
	*f = append(*f, externalServer{name: name, cmd: cmd})
	return nil
}

var externalURL = regexp.MustCompile(`http://[0-9A-Za-z.:\[\]-]+`)

// startExternal starts an external server and waits for its URL.
func startExternal(name, command, upstream string) (*child, error) {
	cmd := exec.Command("sh", "-c", command)
	cmd.Env = append(os.Environ(), "BENCH_UPSTREAM="+upstream)
	cmd.Stderr = nil // servers log every request: discarded
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{role: name, cmd: cmd, wait: make(chan error, 1), pid: cmd.Process.Pid}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if u := externalURL.FindString(sc.Text()); u != "" {
			c.addr = strings.TrimSuffix(u, "/")
			break
		}
	}
	if c.addr == "" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%s printed no http:// URL", name)
	}
	go func() {
		for sc.Scan() {
		}
		c.wait <- cmd.Wait()
	}()
	return c, nil
}

// stopExternal stops an external server with SIGTERM, killing it after
// a few seconds.
func (c *child) stopExternal() error {
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.wait:
		return nil
	case <-time.After(10 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.wait
		return fmt.Errorf("%s did not stop; killed", c.role)
	}
}

// externalStats reads an external server's CPU time and RSS from /proc.
func (c *child) externalStats() (procStats, error) {
	var st procStats
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.pid))
	if err != nil {
		return st, err
	}
	// The fields after the command name, which is in parentheses.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(fields) < 13 {
		return st, fmt.Errorf("/proc/%d/stat: too few fields", c.pid)
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return st, fmt.Errorf("/proc/%d/stat: bad CPU times", c.pid)
	}
	const ticks = 100 // USER_HZ on Linux
	st.CPUSeconds = (utime + stime) / ticks
	st.RSS, st.PeakRSS, err = readRSSOf(fmt.Sprintf("/proc/%d/status", c.pid))
	return st, err
}
