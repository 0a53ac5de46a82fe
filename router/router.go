package router

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/videos"
)

// A Route is a list of models and the backends that serve them, one per
// endpoint family; a nil backend serves none of the family's requests
// (they get 404 model_not_found, as a model that does not exist).
type Route struct {
	// Models are the models of the route, as the catalogue lists them
	// ([Router.Catalog]). A route without models is the default route:
	// it serves every model that no other route lists, and adds none to
	// the catalogue.
	Models []models.Model

	Chat        chat.Backend
	Completions completions.Backend
	Responses   responses.Backend
	Videos      videos.Generator
}

// A Router sends each request to a backend of the route that lists its
// model. Make one with [New]; it is safe for concurrent use.
type Router struct {
	routes   []Route
	byModel  map[string]int // the index of each listed model's route
	fallback int            // the index of the default route, or -1
	catalog  models.Catalog
	families families
}

// families records which families any route serves.
type families struct{ chat, completions, responses, videos bool }

// New returns the router of routes. It fails if a model has no id or is
// listed by two routes, or if two routes are default routes (without
// models). The routes are copied: changing them afterwards changes
// nothing.
func New(routes ...Route) (*Router, error) {
	r := &Router{routes: slices.Clone(routes), byModel: make(map[string]int), fallback: -1}
	var listed []models.Model
	for i := range r.routes {
		rt := &r.routes[i]
		if len(rt.Models) == 0 {
			if r.fallback >= 0 {
				return nil, fmt.Errorf("router: New: routes %d and %d are both default routes (without models)", r.fallback, i)
			}
			r.fallback = i
		}
		for _, m := range rt.Models {
			if m.ID == "" {
				return nil, fmt.Errorf("router: New: route %d lists a model without an id", i)
			}
			if other, ok := r.byModel[m.ID]; ok {
				return nil, fmt.Errorf("router: New: model %q is listed by routes %d and %d", m.ID, other, i)
			}
			r.byModel[m.ID] = i
			listed = append(listed, m)
		}
		r.families.chat = r.families.chat || rt.Chat != nil
		r.families.completions = r.families.completions || rt.Completions != nil
		r.families.responses = r.families.responses || rt.Responses != nil
		r.families.videos = r.families.videos || rt.Videos != nil
	}
	r.catalog = models.NewMemoryCatalog(listed...)
	return r, nil
}

// Catalog returns the catalogue of the routes' models, in the order of
// the routes and of their Models: give it to the handlers and to
// models.NewHandler, so that /v1/models lists what the router serves. It
// does not list the models of the default route, which the embedder
// lists in a catalogue of its own, if any.
func (r *Router) Catalog() models.Catalog { return r.catalog }

// route returns the route of model: the one that lists it, or the
// default route; nil if there is neither.
func (r *Router) route(model string) *Route {
	if i, ok := r.byModel[model]; ok {
		return &r.routes[i]
	}
	if r.fallback >= 0 {
		return &r.routes[r.fallback]
	}
	return nil
}

// pick returns the backend of family that serves model, or an
// apierrors.ModelNotFound when no route serves model in that family.
func pick[B comparable](r *Router, model string, family func(*Route) B) (B, error) {
	var none B
	if rt := r.route(model); rt != nil && family(rt) != none {
		return family(rt), nil
	}
	return none, apierrors.ModelNotFound(model)
}

// Chat returns the chat backend of the router: each request goes to the
// Chat backend of its model's route, asked for a stream as chat.Deltas
// asks (a backend that does not stream still serves streams). Nil if no
// route has a Chat backend.
func (r *Router) Chat() chat.StreamingBackend {
	if !r.families.chat {
		return nil
	}
	return text[*chat.Params, *chat.Result, chat.Delta, chat.Backend]{r: r, of: chatOf, model: func(p *chat.Params) string { return p.Request.Model }, complete: chat.Backend.Complete, deltas: chat.Deltas}
}

func chatOf(rt *Route) chat.Backend { return rt.Chat }

// A text is the backend of a text family (chat, completions, responses)
// that a Router gives: P are the family's Params, R its Result, D its
// Delta and B its Backend. It asks the backend that the route of the
// request's model gives (of), with the very Params it is given, so that
// what they carry (the client's body, the stream's flush) and what the
// backend's deltas and results carry reaches that backend and the
// handler as it does without a router.
type text[P, R, D any, B comparable] struct {
	r        *Router
	of       func(*Route) B
	model    func(P) string
	complete func(B, context.Context, P) (R, error)
	deltas   func(context.Context, B, P) iter.Seq2[D, error] // chat.Deltas and the like
}

func (t text[P, R, D, B]) Complete(ctx context.Context, p P) (R, error) {
	b, err := pick(t.r, t.model(p), t.of)
	if err != nil {
		var none R
		return none, err
	}
	return t.complete(b, ctx, p)
}

func (t text[P, R, D, B]) Stream(ctx context.Context, p P) iter.Seq2[D, error] {
	b, err := pick(t.r, t.model(p), t.of)
	if err != nil {
		return func(yield func(D, error) bool) {
			var zero D
			yield(zero, err)
		}
	}
	return t.deltas(ctx, b, p)
}

// Completions returns the completions backend of the router, as
// [Router.Chat] does the chat backend. Nil if no route has a Completions
// backend.
func (r *Router) Completions() completions.StreamingBackend {
	if !r.families.completions {
		return nil
	}
	return text[*completions.Params, *completions.Result, completions.Delta, completions.Backend]{r: r, of: completionsOf, model: func(p *completions.Params) string { return p.Request.Model }, complete: completions.Backend.Complete, deltas: completions.Deltas}
}

func completionsOf(rt *Route) completions.Backend { return rt.Completions }

// Responses returns the responses backend of the router, as [Router.Chat]
// does the chat backend. It is also a responses.Compactor, which
// compacts with the backend of the route as responses.Compact does (400
// for one that is not a Compactor). Nil if no route has a Responses
// backend.
func (r *Router) Responses() responses.StreamingBackend {
	if !r.families.responses {
		return nil
	}
	return responsesBackend{text[*responses.Params, *responses.Result, responses.Delta, responses.Backend]{r: r, of: responsesOf, model: func(p *responses.Params) string { return p.Request.Model }, complete: responses.Backend.Complete, deltas: responses.Deltas}}
}

func responsesOf(rt *Route) responses.Backend { return rt.Responses }

var (
	_ responses.Compactor = responsesBackend{}
	_ videos.Submitter    = videoGenerator{}
)

type responsesBackend struct {
	text[*responses.Params, *responses.Result, responses.Delta, responses.Backend]
}

func (b responsesBackend) Compact(ctx context.Context, p *responses.CompactParams) (*responses.CompactResult, error) {
	rb, err := pick(b.r, p.Request.Model, responsesOf)
	if err != nil {
		return nil, err
	}
	return responses.Compact(ctx, rb, p)
}

// Videos returns the video generator of the router: each task goes to
// the Videos generator of its model's route. It is also a
// videos.Submitter, whose Submit forwards to the route's generator when
// that is one (the relay's is), so that a relayed task is created
// upstream before the client is answered, and otherwise submits nothing
// (an empty ref). Nil if no route has a Videos generator.
func (r *Router) Videos() videos.Generator {
	if !r.families.videos {
		return nil
	}
	return videoGenerator{r}
}

type videoGenerator struct{ r *Router }

func videosOf(rt *Route) videos.Generator { return rt.Videos }

func (g videoGenerator) Generate(ctx context.Context, t *videos.Task, progress func(int)) (*videos.Result, error) {
	b, err := pick(g.r, t.Model, videosOf)
	if err != nil {
		return nil, err
	}
	return b.Generate(ctx, t, progress)
}

func (g videoGenerator) Submit(ctx context.Context, t *videos.Task) (string, error) {
	b, err := pick(g.r, t.Model, videosOf)
	if err != nil {
		return "", err
	}
	if s, ok := b.(videos.Submitter); ok {
		return s.Submit(ctx, t)
	}
	return "", nil
}
