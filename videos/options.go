package videos

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/internal/httpjson"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
	"github.com/gatewaykit/gatewaykit/internal/quietlog"
	"github.com/gatewaykit/gatewaykit/models"
)

// Defaults of the handler.
const (
	// DefaultMaxImageBytes bounds one reference image (an uploaded file or
	// a data URI, decoded): 10 MiB.
	DefaultMaxImageBytes int64 = 10 << 20
	// DefaultMaxExtraBytes bounds the fields of a create request that
	// the request types do not model (kept in the Extra maps for the
	// generator, and stored with the task): 64 KiB in all, counting the
	// bytes of their names and of their JSON values (a form field's value
	// as a JSON string).
	DefaultMaxExtraBytes int64 = 64 << 10
	// DefaultMaxFormFields bounds the number of fields (parts) of a
	// multipart/form-data create request: 32.
	DefaultMaxFormFields = 32
	// DefaultPollAfter is the poll interval suggested to clients in the
	// openai-poll-after-ms header (spec §8 recommends 3 to 10 seconds).
	DefaultPollAfter = 3 * time.Second
	// DefaultPricePerSecond is what one second of video costs by default,
	// in the unit of the API keys' quotas (auth.Quota): 1000.
	DefaultPricePerSecond int64 = 1000
	// unknownSeconds is the duration charged for a task whose request
	// and model name none, when the model lists no allowed durations.
	unknownSeconds = 10
)

// An Option configures [NewHandler].
type Option func(*config)

type config struct {
	logger        *slog.Logger
	maxBytes      int64
	maxImageBytes int64
	maxExtraBytes int64
	maxFormFields int
	owner         auth.OwnerFunc
	allow         models.AllowFunc
	proxy         *http.Client
	publicURL     *url.URL
	notify        func()
	submitter     Submitter
	pollAfter     time.Duration
	price         func(model string) int64
	now           func() time.Time
	intercept     pipeline.Config // its Chain: the interceptors of WithInterceptors
}

func newConfig(opts []Option) *config {
	c := &config{
		logger:        quietlog.Discard,
		maxBytes:      httpjson.DefaultMaxBytes,
		maxImageBytes: DefaultMaxImageBytes,
		maxExtraBytes: DefaultMaxExtraBytes,
		maxFormFields: DefaultMaxFormFields,
		owner:         auth.AccountOwner,
		allow:         principalAllows,
		pollAfter:     DefaultPollAfter,
		price:         func(string) int64 { return DefaultPricePerSecond },
		now:           time.Now,
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

func principalAllows(ctx context.Context, id string) bool {
	p, ok := auth.PrincipalFrom(ctx)
	return !ok || p.AllowsModel(id)
}

// WithLogger sets the logger that errors are logged to (through
// apierrors.Renderer: client errors at debug level, server errors at
// error level). By default, and for nil, nothing is logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = quietlog.Or(l) }
}

// WithMaxRequestBytes bounds the body of the create requests, JSON or
// multipart. A larger body is refused with a 400 in the flat shape.
// Default 32 MiB; values ≤ 0 mean the default.
func WithMaxRequestBytes(n int64) Option {
	return func(c *config) { c.maxBytes = cmp.Or(max(n, 0), c.maxBytes) }
}

// WithMaxImageBytes bounds one reference image: an uploaded
// input_reference file, or the decoded bytes of a data URI in
// input_reference.image_url or in an image asset. Default
// [DefaultMaxImageBytes] (10 MiB); values ≤ 0 mean the default.
func WithMaxImageBytes(n int64) Option {
	return func(c *config) { c.maxImageBytes = cmp.Or(max(n, 0), c.maxImageBytes) }
}

// WithMaxExtraBytes bounds the fields of a create request that the
// request types do not model, which a task keeps (see
// [CreateRequest].Extra): their names and JSON values, on every level of
// the request, may take at most n bytes in all. A request over the limit
// is refused with a 400 in the flat shape that names the largest such
// field. Default [DefaultMaxExtraBytes] (64 KiB); values ≤ 0 mean the
// default.
func WithMaxExtraBytes(n int64) Option {
	return func(c *config) { c.maxExtraBytes = cmp.Or(max(n, 0), c.maxExtraBytes) }
}

// WithMaxFormFields bounds the number of fields (parts) of a
// multipart/form-data create request; a form with more is refused with a
// 400 in the flat shape. Each text field is also at most 64 KiB long
// (input_reference fields excepted, which hold an image). Default
// [DefaultMaxFormFields] (32); values ≤ 0 mean the default.
func WithMaxFormFields(n int) Option {
	return func(c *config) { c.maxFormFields = cmp.Or(max(n, 0), c.maxFormFields) }
}

// WithOwner sets how the owner that scopes a request's tasks is found
// (see [Task.Owner] and auth.OwnerFunc). Default auth.AccountOwner: by
// account, from auth.PrincipalFrom; auth.KeyOwner scopes by key. nil
// restores the default.
func WithOwner(f auth.OwnerFunc) Option {
	return func(c *config) {
		if f != nil {
			c.owner = f
		}
	}
}

// WithAllowed sets which models a caller may create videos with (see
// models.Require). Default: the models that the principal's
// Principal.AllowsModel accepts (all, for a key without a list).
func WithAllowed(allow models.AllowFunc) Option {
	return func(c *config) {
		if allow != nil {
			c.allow = allow
		}
	}
}

// WithContentProxy makes the content endpoint stream content that lives
// at a URL (a [URLStore], or a generator's result URL) through the
// gateway, fetched with client, instead of answering 301. Nil means a
// client with a 30-second connection timeout and no overall timeout.
// By default the endpoint redirects.
//
// The trade-off: a redirect costs the gateway nothing and lets the client
// download from the CDN directly, but the official OpenAI Go SDK (v3.53
// and later) refuses to follow a redirect to another origin, so its
// Videos.DownloadContent fails against a redirect to object storage;
// other clients need to follow redirects too. Streaming works with every
// client (Range and HEAD are passed through) at the price of the
// gateway's bandwidth and a connection held for each download.
func WithContentProxy(client *http.Client) Option {
	return func(c *config) {
		if client == nil {
			client = defaultProxyClient()
		}
		c.proxy = client
	}
}

// WithPublicURL sets the base URL under which clients reach the video
// routes, such as "https://api.example.com" (the routes' /v1/... paths
// are appended). It makes the metadata url and thumbnail_url of completed
// tasks whose content the gateway serves. By default they are paths
// relative to the client's origin ("/v1/videos/{task_id}/content"): the
// handler never builds a URL from the request's Host header, which the
// client controls. WithPublicURL panics if base is not an absolute URL.
func WithPublicURL(base string) Option {
	return func(c *config) {
		u, err := url.Parse(strings.TrimSuffix(base, "/"))
		if err != nil || !u.IsAbs() || u.Host == "" {
			panic("videos: WithPublicURL: not an absolute URL: " + base)
		}
		c.publicURL = u
	}
}

// WithNotify sets a function called after each task is created, such as
// a runner (package videos/runner)'s Wake, so that generation starts at once. Default none.
func WithNotify(f func()) Option {
	return func(c *config) { c.notify = f }
}

// WithSubmitter makes the create routes start each validated task with
// s before answering (see [Submitter]): a creation that s refuses is
// answered with s's error at once, and no task is stored; the reference s
// returns is stored as the task's BackendRef. Pass the runner's
// [Generator] when it implements Submitter:
//
//	if s, ok := gen.(videos.Submitter); ok {
//		opts = append(opts, videos.WithSubmitter(s))
//	}
//
// Default none: tasks are stored as they are, and the generator starts
// the work when a runner claims them.
func WithSubmitter(s Submitter) Option {
	return func(c *config) { c.submitter = s }
}

// WithPollAfter sets the poll interval suggested in the
// openai-poll-after-ms header of the status of a queued or running task,
// which the official SDKs' pollers follow (up to 8 seconds). Default
// [DefaultPollAfter] (3s); 0 or less sends no header.
func WithPollAfter(d time.Duration) Option {
	return func(c *config) { c.pollAfter = d }
}

// WithPricing sets what one second of video of each model costs, in the
// unit of the API keys' quotas (auth.Quota); a price ≤ 0 makes the model
// free. Default: [DefaultPricePerSecond] for every model; nil restores
// it.
//
// A task costs its duration in seconds (the request's, else the model's
// default; if neither names one, the longest the model allows, else 10),
// rounded up, times its model's price. The create routes reserve that
// amount against the caller's key (auth.Reserve) before storing the task,
// and refuse with 403 insufficient_quota, in the flat shape, when all of
// the key's quota is already reserved by requests and tasks in flight.
// The amount is kept in [Task.Charge]: the runner (package videos/runner) (given the key store
// with runner.WithKeyStore) charges it when the task completes and releases
// it when the task fails; deleting a task before it finishes releases it
// too. A request that is not behind auth.Middleware is not charged.
//
// The settlement of a charged task records it in the key's usage
// (auth.SettleParams: its model, and, once completed, its cost in US
// dollars at its model's models.Pricing.PerSecond); a failed task is
// recorded at no cost. A free task is neither charged nor recorded, nor
// is a task deleted before it finishes (its reservation is released).
func WithPricing(price func(model string) int64) Option {
	return func(c *config) {
		if price == nil {
			price = func(string) int64 { return DefaultPricePerSecond }
		}
		c.price = price
	}
}

// WithClock sets the clock of the created_at times. Default time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}
