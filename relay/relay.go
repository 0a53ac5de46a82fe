package relay

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/bytesem"
)

// Relay forwards requests for its routed models to their upstreams. Its
// backends ([Relay.Chat], [Relay.Completions], [Relay.Videos], …) plug
// into the endpoint handlers; [Relay.Do] is the one way every request goes
// upstream. A Relay is safe for concurrent use.
type Relay struct {
	routes    map[string][]Upstream // public model → upstreams, in failover order
	models    []string              // public model ids, in the order given
	transport http.RoundTripper
	timeouts  Timeouts
	logger    *slog.Logger
	poll      time.Duration        // video status poll interval
	maxMedia  int64                // largest video or thumbnail downloaded
	health    map[string][]*health // public model → the cool-down of each upstream
	cooldown  time.Duration
	maxCool   time.Duration
	now       func() time.Time // the clock of cool-downs
	observe   func(context.Context, Attempt)
	access    accessConfig  // the access settings given to New
	answered  *atomic.Int64 // when an upstream last answered (UnixNano), for Ping; shared by copies
	replies   *bytesem.Sem  // the bound on buffered replies (nil: none); shared by copies
}

// An Option configures a relay, given to [New]: its transport, timeouts,
// logger, cool-downs and so on, and, with the access options ([AccessOption], which are
// Options too), every access handler of it. Only [New] takes the options
// that configure the relay itself: [NewAccessHandler] takes
// AccessOptions, and another Option does not compile there.
type Option interface {
	applyToRelay(*config)
}

// An AccessOption configures the access points ([NewAccessHandler]):
// given to [New], those of every access handler of the relay; given to
// NewAccessHandler, that handler's only, after New's. The AccessOptions
// are [WithMaxRequestBytes], [WithAllowed], [WithEndpointType],
// [WithKeepAlive] and [WithFallback].
type AccessOption interface {
	Option
	applyToAccess(*accessConfig)
}

// option is an Option that configures the relay itself.
type option func(*config)

func (o option) applyToRelay(c *config) { o(c) }

// accessOption is an AccessOption.
type accessOption func(*accessConfig)

func (o accessOption) applyToRelay(c *config)        { o(&c.access) }
func (o accessOption) applyToAccess(c *accessConfig) { o(c) }

type config struct {
	transport   http.RoundTripper
	timeouts    Timeouts
	logger      *slog.Logger
	poll        time.Duration
	maxMedia    int64
	cooldown    time.Duration
	maxCooldown time.Duration
	observe     func(context.Context, Attempt)
	maxReplies  int64        // WithMaxReplyBytesInFlight's n
	access      accessConfig // the settings of NewAccessHandler
}

// WithTransport sets the round tripper of every upstream call. The
// default is a transport made by [NewTransport] (with the Connect timeout
// of [WithTimeouts]), one per Relay. A transport given here keeps its own
// dial and TLS timeouts: Timeouts.Connect does not apply to it, while
// FirstByte and Idle still do. Redirects are never followed: a 3xx reply
// is handed to the caller. nil restores the default.
func WithTransport(rt http.RoundTripper) Option {
	return option(func(c *config) { c.transport = rt })
}

// WithTimeouts sets the timeouts of upstream calls; zero fields keep
// their defaults ([DefaultConnectTimeout], [DefaultFirstByteTimeout],
// [DefaultIdleTimeout]). See [Timeouts].
func WithTimeouts(t Timeouts) Option {
	return option(func(c *config) { c.timeouts = t })
}

// WithLogger sets the logger of the relay: failovers and cool-downs are
// logged at warn level with the upstream's name and the error, its
// upstream text redacted ([Redact]; never a key). By default, and when l
// is nil, nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return option(func(c *config) { c.logger = l })
}

// DefaultPollInterval is how often the video backend polls an upstream
// task's status unless [WithPollInterval] sets another interval: within the
// 3 to 10 seconds that spec §8 recommends.
const DefaultPollInterval = 5 * time.Second

// DefaultMaxMediaBytes is the largest video or thumbnail that the video
// backend downloads from an upstream unless [WithMaxMediaBytes] sets
// another limit.
const DefaultMaxMediaBytes int64 = 512 << 20

// WithPollInterval sets how often the video backend ([Relay.Videos]) asks
// the upstream for a task's status. The default is [DefaultPollInterval];
// d ≤ 0 restores it.
func WithPollInterval(d time.Duration) Option {
	return option(func(c *config) {
		if d <= 0 {
			d = DefaultPollInterval
		}
		c.poll = d
	})
}

// WithMaxMediaBytes sets the largest video or thumbnail that the video
// backend downloads from an upstream; a larger one fails the task. The
// default is [DefaultMaxMediaBytes]; n ≤ 0 restores it.
func WithMaxMediaBytes(n int64) Option {
	return option(func(c *config) {
		if n <= 0 {
			n = DefaultMaxMediaBytes
		}
		c.maxMedia = n
	})
}

// DefaultMaxReplyBytesInFlight bounds the bytes of the upstream replies
// that a relay reads whole, across all the requests it serves at once,
// unless [WithMaxReplyBytesInFlight] sets another bound: 64 MiB, two
// replies of the largest size read (32 MiB).
const DefaultMaxReplyBytesInFlight int64 = 64 << 20

// WithMaxReplyBytesInFlight bounds the bytes of the upstream replies that
// the relay reads whole before answering, across all the requests it
// serves at once: the replies to non-streamed chat, completions and
// responses requests (of every upstream format, translated or not), and
// the video backend's task replies. A reply's bytes count from its first
// byte read until it is decoded, and are given back then. A reply that
// does not fit beside those being read for other requests fails with a
// 503 service_unavailable (Retry-After: 1), one larger than n itself (or
// than 32 MiB, the largest reply read) with a 502 bad_gateway; in either
// case the rest of it is not read, and the upstream request is closed.
// 0 restores [DefaultMaxReplyBytesInFlight]; a negative n removes the
// bound (each reply is still limited to 32 MiB).
//
// Streams are not counted: they are passed on event by event (each event
// at most 32 MiB, see package sse). Neither are the access points'
// replies ([NewAccessHandler]), which are copied to the client as they
// arrive, nor the videos and thumbnails that the video backend downloads
// ([WithMaxMediaBytes]).
func WithMaxReplyBytesInFlight(n int64) Option {
	return option(func(c *config) { c.maxReplies = n })
}

// New returns a relay for routes. Each route needs a public model id, not
// used by another route, and at least one upstream with an absolute
// http(s) BaseURL; New fills each upstream's Name and Model defaults (see
// [Upstream]) in its own copy of routes.
func New(routes []Route, opts ...Option) (*Relay, error) {
	c := config{poll: DefaultPollInterval, maxMedia: DefaultMaxMediaBytes, access: defaultAccessConfig()}
	for _, o := range opts {
		o.applyToRelay(&c)
	}
	r := &Relay{
		routes:    make(map[string][]Upstream, len(routes)),
		transport: c.transport,
		timeouts:  c.timeouts.withDefaults(),
		logger:    c.logger,
		poll:      c.poll,
		maxMedia:  c.maxMedia,
		health:    make(map[string][]*health, len(routes)),
		cooldown:  c.cooldown,
		maxCool:   c.maxCooldown,
		now:       time.Now,
		observe:   c.observe,
		access:    c.access,
		answered:  new(atomic.Int64),
	}
	switch {
	case c.maxReplies == 0:
		r.replies = bytesem.New(DefaultMaxReplyBytesInFlight)
	case c.maxReplies > 0:
		r.replies = bytesem.New(c.maxReplies)
	}
	if r.cooldown <= 0 {
		r.cooldown = DefaultCooldown
	}
	if r.maxCool <= 0 {
		r.maxCool = DefaultMaxCooldown
	}
	r.maxCool = max(r.maxCool, r.cooldown)
	if r.logger == nil {
		r.logger = slog.New(slog.DiscardHandler)
	}
	if r.transport == nil {
		r.transport = newTransport(r.timeouts.Connect)
	}
	for _, rt := range routes {
		if rt.Model == "" {
			return nil, errors.New("relay: New: a route has no model id")
		}
		if _, dup := r.routes[rt.Model]; dup {
			return nil, fmt.Errorf("relay: New: model %q is routed twice", rt.Model)
		}
		if len(rt.Upstreams) == 0 {
			return nil, fmt.Errorf("relay: New: model %q has no upstream", rt.Model)
		}
		ups := slices.Clone(rt.Upstreams)
		for i := range ups {
			if err := ups[i].normalize(rt.Model); err != nil {
				return nil, err
			}
		}
		r.routes[rt.Model] = ups
		r.models = append(r.models, rt.Model)
		hs := make([]*health, len(ups))
		for i := range hs {
			hs[i] = new(health)
		}
		r.health[rt.Model] = hs
	}
	return r, nil
}

// Models returns the public ids of the routed models, in the order of the
// routes given to [New].
func (r *Relay) Models() []string {
	return slices.Clone(r.models)
}

// Serves reports whether model is routed.
func (r *Relay) Serves(model string) bool {
	_, ok := r.routes[model]
	return ok
}

// Upstreams returns copies of the upstreams of model, in failover order,
// or nil if model is not routed.
func (r *Relay) Upstreams(model string) []Upstream {
	return slices.Clone(r.routes[model])
}

// Do sends the request that build makes for each upstream of model, in
// failover order, and returns the first reply that is not a failover case,
// with the upstream that gave it. The caller must close the reply's body.
// The *Upstream (also the one passed to build) is the relay's own: read
// it, never modify it.
//
// Do sets the request's context (derived from ctx, so a client that goes
// away cancels the upstream call at once, before the headers as well as
// while the body is read) and its Authorization header (the upstream's
// [Upstream.Key]; build never needs, and must never copy, the client's
// credentials), unless build has put the upstream's key in the header
// of a Gemini-format upstream (x-goog-api-key): then no Authorization
// header goes. build is called once per attempt and must return a fresh
// request each time: build its body from bytes (bytes.NewReader), or, for
// a body that cannot be replayed, return an error on the second call,
// which Do returns as it is. An error from build is never retried.
//
// Failover: Do tries the next upstream when one cannot be reached (a
// connection error), does not send its headers within the FirstByte
// timeout, answers 5xx, or answers 401 or 403, refusing the gateway's key
// for it (Do closes the body of such a reply). Such a failure also
// cools the upstream down ([WithCooldown]: 1s, doubling with each failure
// in a row up to 30s, ended by its next success): while it cools, Do
// tries the route's other upstreams first, so that a dead upstream does
// not cost every request a failed attempt, and tries it last (those
// cooling, the one whose cool-down ends first first) rather than fail
// the request untried. It never fails over
// after it has returned a reply, so nothing has gone to the client yet
// when it does. Retrying is safe for generation requests: an upstream that
// failed with a 5xx or a broken connection produced nothing the client
// sees, and at worst spent tokens. It is not safe for requests with a
// lasting effect, such as creating a video task, when the failed upstream
// may have acted before failing: those send an Idempotency-Key so that an
// upstream honouring it does not act twice.
//
// A reply of any other status, other 4xx and 3xx included, is returned
// as it is: turn an unwanted one into the client's error with
// [UpstreamError]. When every upstream fails, Do returns the last failure
// as an *apierrors.Error: 502 bad_gateway for a 5xx, a 401 or 403 (see
// UpstreamError) or a connection error, 504
// gateway_timeout for a FirstByte timeout. When ctx is done, Do returns
// ctx's error without trying further. A model that is not routed is
// apierrors.ModelNotFound.
//
// The reply's body enforces the Idle timeout on each read: a read that
// waits longer fails with a 504 gateway_timeout *apierrors.Error.
func (r *Relay) Do(ctx context.Context, model string, build func(u *Upstream) (*http.Request, error)) (*http.Response, *Upstream, error) {
	return r.do(ctx, model, func(actx context.Context, u *Upstream) (*http.Request, error) {
		req, err := build(u)
		if err != nil {
			return nil, err
		}
		return req.WithContext(actx), nil
	})
}

// attemptBuild makes the request of one attempt at u with ctx, the
// attempt's context (the caller's, with the attempt's deadline and
// cancellation, and the caller's values): the relay's own build
// functions, which so need no copy of each request made to set it.
type attemptBuild func(ctx context.Context, u *Upstream) (*http.Request, error)

// do is [Relay.Do] with a build function that is given the attempt's
// context.
func (r *Relay) do(ctx context.Context, model string, build attemptBuild) (*http.Response, *Upstream, error) {
	ups, ok := r.routes[model]
	if !ok {
		return nil, nil, apierrors.ModelNotFound(model)
	}
	// Cool-downs order the upstreams of a failover list; a route with one
	// upstream has nothing to order, and skips them.
	hs := r.health[model]
	multi := len(ups) > 1
	var buf [4]int
	tries := append(buf[:0], 0)
	if multi {
		tries = order(buf[:0], hs, r.now())
	}
	var last error
	for k, i := range tries {
		u := &ups[i]
		var start time.Time
		if r.observe != nil {
			start = time.Now()
		}
		res, retry, err := r.send(ctx, u, build)
		if err == nil && res.StatusCode < 500 && !refused(res.StatusCode) {
			if multi {
				hs[i].ok()
			}
			r.markAnswered()
			if r.observe != nil {
				r.observe(ctx, Attempt{Model: model, Upstream: u.Name, Status: res.StatusCode, Duration: time.Since(start)})
			}
			return res, u, nil
		}
		status := 0
		if err == nil {
			status = res.StatusCode
			err = UpstreamError(res, u)
			retry = true
		}
		if r.observe != nil {
			r.observe(ctx, Attempt{Model: model, Upstream: u.Name, Status: status, Err: err,
				Failover: retry && ctx.Err() == nil, Duration: time.Since(start)})
		}
		if !retry || ctx.Err() != nil {
			return nil, nil, err
		}
		last = err
		if !multi {
			break
		}
		cool := hs[i].fail(r.now(), r.cooldown, r.maxCool)
		if k+1 < len(tries) {
			// The last failure is the client's error, logged where it
			// is rendered.
			r.logger.LogAttrs(ctx, slog.LevelWarn, "relay: upstream failed; cooling it down and trying the next one",
				slog.String("model", model),
				slog.String("upstream", u.Name),
				slog.Duration("cooldown", cool),
				slog.String("next", ups[tries[k+1]].Name),
				slog.String("error", err.Error()))
		}
	}
	return nil, nil, last
}

// send makes one attempt at u: build, send, and wait for the headers
// within the FirstByte timeout. It reports whether a failure may be
// retried on another upstream.
func (r *Relay) send(ctx context.Context, u *Upstream, build attemptBuild) (_ *http.Response, retry bool, _ error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	actx, cancel := context.WithCancelCause(ctx)
	req, err := build(actx, u)
	if err != nil {
		cancel(nil)
		return nil, false, err
	}
	if req.Header == nil {
		req.Header = make(http.Header)
	}
	switch {
	case u.Key != "" && req.Header.Get("X-Goog-Api-Key") == u.Key:
		// build placed the key as a Gemini-format upstream takes it.
		req.Header.Del("Authorization")
	case u.Key != "":
		req.Header.Set("Authorization", "Bearer "+u.Key)
	default:
		req.Header.Del("Authorization")
	}
	b := &body{ctx: actx, cancel: cancel, idle: r.timeouts.Idle, firstByte: r.timeouts.FirstByte, upstream: u.Name, replies: r.replies}
	b.timer = time.AfterFunc(r.timeouts.FirstByte, b.expire)
	res, err := r.transport.RoundTrip(req)
	fired := !b.timer.Stop()
	if err == nil && fired {
		// The timer went off as the headers arrived: the body's reads
		// would fail, so count it as the timeout.
		res.Body.Close()
		err = context.Cause(actx)
	}
	if err != nil {
		cancel(nil)
		if cerr := ctx.Err(); cerr != nil {
			return nil, false, cerr
		}
		if errors.Is(context.Cause(actx), errFirstByte) {
			return nil, true, b.timeoutError()
		}
		return nil, true, apierrors.BadGateway("The upstream could not be reached.",
			fmt.Errorf("relay: upstream %s: %w", u.Name, err))
	}
	b.rc, b.length = res.Body, res.ContentLength
	b.phase.Store(phaseBody)
	res.Body = b
	return res, false, nil
}

// refused reports whether status says that an upstream refused the
// gateway's credentials.
func refused(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

var (
	errFirstByte = errors.New("relay: first-byte timeout")
	errIdle      = errors.New("relay: idle timeout")
)

const (
	phaseFirstByte int32 = iota
	phaseBody
)

// body is an upstream reply's body: it enforces the Idle timeout on each
// read, and releases the attempt's context when closed. Before each read
// it calls wait, when set (a stream's Params.Flush, see paced): the
// handler flushes what it wrote of the bytes read before. A reply read whole ([readReply]) is counted in
// replies, the relay's bound on buffered replies.
type body struct {
	rc        io.ReadCloser
	ctx       context.Context
	cancel    context.CancelCauseFunc
	timer     *time.Timer
	phase     atomic.Int32
	idle      time.Duration
	firstByte time.Duration
	upstream  string
	wait      func() // or nil
	replies   *bytesem.Sem
	length    int64 // the reply's Content-Length, or -1
}

// expire is the timer's function: it cancels the attempt with the cause
// of the phase it is in.
func (b *body) expire() {
	if b.phase.Load() == phaseFirstByte {
		b.cancel(errFirstByte)
	} else {
		b.cancel(errIdle)
	}
}

func (b *body) Read(p []byte) (int, error) {
	if b.wait != nil {
		b.wait()
	}
	b.timer.Reset(b.idle)
	n, err := b.rc.Read(p)
	b.timer.Stop()
	if err != nil && err != io.EOF {
		if errors.Is(context.Cause(b.ctx), errIdle) {
			return n, b.timeoutError()
		}
		if cerr := b.ctx.Err(); cerr != nil {
			// The client went away (or ctx's deadline passed): say so
			// rather than with the transport's text.
			return n, cerr
		}
	}
	return n, err
}

func (b *body) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}

// timeoutError is the client's error for the timeout that went off.
func (b *body) timeoutError() *apierrors.Error {
	if b.phase.Load() == phaseFirstByte {
		return apierrors.New(apierrors.CodeGatewayTimeout,
			fmt.Sprintf("The upstream did not answer within %s.", b.firstByte)).WithCause(fmt.Errorf("relay: upstream %s: %w", b.upstream, errFirstByte))
	}
	return apierrors.New(apierrors.CodeGatewayTimeout,
		fmt.Sprintf("The upstream sent nothing for %s.", b.idle)).WithCause(fmt.Errorf("relay: upstream %s: %w", b.upstream, errIdle))
}
