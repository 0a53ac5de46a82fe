package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/route"
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
	// error shape, naming the dependencies that do not, otherwise. A
	// dependency that every replica shares ([SharedPinger]: a database
	// server, Redis) does not make a replica unready: it is named in the
	// 200's "unavailable" list instead ({"status":"ready","unavailable":
	// ["redis"]}), so that its outage does not drain the whole fleet at
	// once (the requests that need it fail, with 503, until it is back).
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
//
// A store whose writes can fail while it still answers reads (a full
// disk, a read-only file system, a database that became a standby)
// should fail Ping from such a failed write until a write succeeds,
// trying one itself when asked, so that a replica that cannot record
// what it serves is not ready: the SQLite and PostgreSQL stores do.
type Pinger interface {
	Ping(ctx context.Context) error
}

// A SharedPinger is a [Pinger] that says whether its dependency is shared
// by every replica of the gateway (a database server, Redis) rather than
// this replica's own (a file on its disk, a process beside it).
// Readiness reports a shared dependency that does not answer, but stays
// ready ([ReadyPath]): every replica would fail the same check at once,
// and a load balancer that took them all out of service would turn an
// outage of that dependency (which fails the requests that need it with
// 503) into an outage of the whole gateway. This is the rule of
// Kubernetes' guidance on readiness probes: do not fail readiness for a
// dependency that every replica shares. The PostgreSQL stores of module
// github.com/gatewaykit/gatewaykit/store are shared, and so is a Pinger
// wrapped with [Shared]; a wrapper of a store (auth.CachedKeyStore)
// keeps the method of the store it wraps.
type SharedPinger interface {
	Pinger
	// Shared reports whether every replica depends on this same
	// dependency.
	Shared() bool
}

// Shared returns p as a [SharedPinger] whose Shared reports true: for a
// dependency of [Config].ReadyChecks that every replica shares, such as
// a Redis rate limiter.
func Shared(p Pinger) SharedPinger { return shared{p} }

type shared struct{ Pinger }

func (shared) Shared() bool { return true }

// readyCheck is one dependency that ReadyPath asks.
type readyCheck struct {
	name   string
	ping   Pinger
	shared bool // see SharedPinger
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
		sp, ok := p.(SharedPinger)
		checks = append(checks, readyCheck{name, p, ok && sp.Shared()})
	}
	add("keys", c.Keys)
	if c.ResponseStore != nil {
		add("responses", c.ResponseStore)
	}
	if c.ConversationStore != nil {
		add("conversations", c.ConversationStore)
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
// not sent: it may describe the infrastructure), and a 200 the shared
// ones that failed, whose first error is logged too.
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
		body := healthBody{Status: "ok"}
		if path == ReadyPath {
			unavailable, cause, err := ready(r.Context(), checks, timeout)
			if err != nil {
				rd.Write(w, r, err)
				return true
			}
			if cause != nil {
				logger.LogAttrs(r.Context(), slog.LevelWarn, "a shared dependency does not answer; this replica stays ready",
					slog.Any("unavailable", unavailable), slog.String("error", cause.Error()))
			}
			body = healthBody{Status: "ready", Unavailable: unavailable}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			b, _ := json.Marshal(body) // strings only: cannot fail
			_, _ = w.Write(append(b, '\n'))
		}
		return true
	}
}

// healthBody is the body of a 200 of HealthPath or ReadyPath.
type healthBody struct {
	Status      string   `json:"status"`
	Unavailable []string `json:"unavailable,omitempty"`
}

// ready asks every check at once and returns the 503 that names the
// local ones that failed (and the shared ones, if any failed too), or,
// when only shared ones failed, their names and the first one's error.
func ready(ctx context.Context, checks []readyCheck, timeout time.Duration) (unavailable []string, cause, err error) {
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
		return nil, nil, err // the client has gone
	}
	var (
		failed, shared []string
		local          bool
	)
	for i, err := range errs {
		if err == nil {
			continue
		}
		failed = append(failed, checks[i].name)
		if checks[i].shared {
			shared = append(shared, checks[i].name)
		} else if !local {
			local = true
			cause = nil // a local failure's error is the one logged
		}
		if cause == nil {
			cause = fmt.Errorf("gateway: readiness: %s: %w", checks[i].name, err)
		}
	}
	if !local {
		return shared, cause, nil
	}
	return nil, nil, apierrors.New(apierrors.CodeServiceUnavailable,
		fmt.Sprintf("Not ready: %s did not answer.", strings.Join(failed, ", "))).WithCause(cause)
}

// HealthRoutes returns the routes of [HealthPath] and [ReadyPath], each
// for GET and HEAD, served by g, which answers them before
// authentication: for a router that sends the API's other paths
// elsewhere, or g's own API behind routes of its own.
func (g *Gateway) HealthRoutes() []route.Route {
	return route.List(g, http.MethodGet+" "+HealthPath, http.MethodGet+" "+ReadyPath)
}
