package gateway

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/telemetry"
)

// The health routes that [Gateway] serves on its own handler, before
// authentication: they take no credentials, and only GET and HEAD.
const (
	// HealthPath answers 200 {"status":"ok"} while the process answers
	// (liveness).
	HealthPath = "/healthz"
	// ReadyPath answers 200 {"status":"ready"} when every dependency
	// answers (readiness), and 503 service_unavailable in the general
	// error shape, naming the dependencies that do not, otherwise.
	ReadyPath = "/readyz"
)

// DefaultReadyTimeout bounds each check of [ReadyPath].
const DefaultReadyTimeout = 2 * time.Second

// A Pinger is a dependency that a readiness check can ask whether it
// answers: a store with a database or server behind it, or the relay
// ([relay.Relay.Ping]). Ping returns nil when it does, within ctx. It is
// an optional capability of the stores of [Config], found with a type
// assertion: the SQLite, PostgreSQL and Redis stores of module
// github.com/gatewaykit/gatewaykit/store implement it, and the in-memory
// ones, which always answer, do not. Ping must be safe for concurrent
// use and its error must not contain secrets (it is logged).
type Pinger interface {
	Ping(ctx context.Context) error
}

// readyCheck is one dependency that ReadyPath asks.
type readyCheck struct {
	name string
	ping Pinger
}

// readyChecks lists c's dependencies that can be asked: the stores that
// are Pingers, the relay, and c.ReadyChecks, in that order (the latter by
// name). A store given twice (one database behind all of them) is asked
// once.
func readyChecks(c Config) []readyCheck {
	var checks []readyCheck
	add := func(name string, v any) {
		p, ok := v.(Pinger)
		if !ok || p == nil {
			return
		}
		checks = append(checks, readyCheck{name, p})
	}
	add("keys", c.Keys)
	if c.ResponseStore != nil {
		add("responses", c.ResponseStore)
	}
	if c.Tasks != nil {
		add("video tasks", c.Tasks)
	}
	if c.Contents != nil {
		add("video contents", c.Contents)
	}
	if c.Relay != nil {
		add("relay", c.Relay)
	}
	names := make([]string, 0, len(c.ReadyChecks))
	for name := range c.ReadyChecks {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		add(name, c.ReadyChecks[name])
	}
	return checks
}

// health serves HealthPath and ReadyPath, and reports whether r was one
// of them. checks are asked at once, each within timeout; the 503 names
// those that failed, in the order given (the first one's error is logged,
// not sent: it may describe the infrastructure).
func health(checks []readyCheck, timeout time.Duration, logger *slog.Logger) func(w http.ResponseWriter, r *http.Request) bool {
	rd := apierrors.Renderer{Logger: logger}
	return func(w http.ResponseWriter, r *http.Request) bool {
		path := r.URL.Path
		if path != HealthPath && path != ReadyPath {
			return false
		}
		if info := telemetry.FromContext(r.Context()); info != nil {
			info.Route = "GET " + path
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			rd.Write(w, r, apierrors.MethodNotAllowed(r.Method, path, []string{http.MethodGet, http.MethodHead}))
			return true
		}
		status := "ok"
		if path == ReadyPath {
			if err := ready(r.Context(), checks, timeout); err != nil {
				rd.Write(w, r, err)
				return true
			}
			status = "ready"
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			fmt.Fprintf(w, `{"status":%q}`+"\n", status)
		}
		return true
	}
}

// ready asks every check at once and returns the 503 that names those
// that failed.
func ready(ctx context.Context, checks []readyCheck, timeout time.Duration) error {
	errs := make([]error, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			errs[i] = c.ping.Ping(cctx)
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err // the client has gone
	}
	var failed []string
	var cause error
	for i, err := range errs {
		if err != nil {
			failed = append(failed, checks[i].name)
			if cause == nil {
				cause = fmt.Errorf("gateway: readiness: %s: %w", checks[i].name, err)
			}
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return apierrors.New(apierrors.CodeServiceUnavailable,
		fmt.Sprintf("Not ready: %s did not answer.", strings.Join(failed, ", "))).WithCause(cause)
}
