package router_test

import (
	"context"
	"iter"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/router"
	"github.com/gatewaykit/gatewaykit/videos"
)

// named is a backend of every family that answers with its name: the
// content, text or output of its replies, the ref of its submissions,
// the content of its compactions. It does not stream.
type named string

func (n named) Complete(context.Context, *chat.Params) (*chat.Result, error) {
	return &chat.Result{Choices: []chat.Output{{Content: string(n)}}}, nil
}

type namedCompletions string

func (n namedCompletions) Complete(context.Context, *completions.Params) (*completions.Result, error) {
	return &completions.Result{Choices: []completions.Output{{Text: string(n)}}}, nil
}

type namedResponses string

func (n namedResponses) Complete(context.Context, *responses.Params) (*responses.Result, error) {
	return &responses.Result{Output: []responses.Output{{Text: string(n)}}}, nil
}

func (n namedResponses) Compact(context.Context, *responses.CompactParams) (*responses.CompactResult, error) {
	return &responses.CompactResult{EncryptedContent: string(n)}, nil
}

type namedVideos string

func (n namedVideos) Generate(context.Context, *videos.Task, func(int)) (*videos.Result, error) {
	return &videos.Result{RemixedFromVideoID: string(n)}, nil
}

func (n namedVideos) Submit(context.Context, *videos.Task) (string, error) { return string(n), nil }

// plainVideos is a generator that does not submit.
type plainVideos string

func (g plainVideos) Generate(context.Context, *videos.Task, func(int)) (*videos.Result, error) {
	return &videos.Result{RemixedFromVideoID: string(g)}, nil
}

func model(id string) models.Model {
	return models.Model{ID: id, EndpointTypes: []models.EndpointType{models.Compat}}
}

func newRouter(t *testing.T) *router.Router {
	t.Helper()
	rt, err := router.New(
		router.Route{Models: []models.Model{model("own-1"), model("own-2")}, Chat: named("own"), Responses: namedResponses("own")},
		router.Route{Models: []models.Model{model("up-1")}, Chat: named("up"), Completions: namedCompletions("up"), Responses: namedResponses("up"), Videos: namedVideos("up")},
		router.Route{Chat: named("default"), Videos: plainVideos("default")},
	)
	require.NoError(t, err)
	return rt
}

// chatStream puts the content of a chat stream together.
func chatStream(seq iter.Seq2[chat.Delta, error]) (string, error) {
	var s string
	for d, err := range seq {
		if err != nil {
			return s, err
		}
		s += d.Content
	}
	return s, nil
}

func TestRouterSendsEachModelToItsRoute(t *testing.T) {
	t.Parallel()
	rt := newRouter(t)
	notFound := func(m string) error { return apierrors.ModelNotFound(m) }
	for _, tc := range []struct {
		model        string
		chat         string // the backend that answers, if any
		completions  string
		responses    string
		compacted    string
		completedErr error
		responsesErr error
	}{
		{model: "own-1", chat: "own", completedErr: notFound("own-1"), responses: "own", compacted: "own"},
		{model: "own-2", chat: "own", completedErr: notFound("own-2"), responses: "own", compacted: "own"},
		{model: "up-1", chat: "up", completions: "up", responses: "up", compacted: "up"},
		{model: "other", chat: "default", completedErr: notFound("other"), responsesErr: notFound("other")},
	} {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			cp := &chat.Params{Request: &chat.Request{Model: tc.model}}
			res, err := rt.Chat().Complete(ctx, cp)
			require.NoError(t, err)
			require.Equal(t, tc.chat, res.Choices[0].Content)
			text, err := chatStream(rt.Chat().Stream(ctx, cp))
			require.NoError(t, err)
			require.Equal(t, tc.chat, text, "a backend that does not stream serves streams through chat.Deltas")

			cres, err := rt.Completions().Complete(ctx, &completions.Params{Request: &completions.Request{Model: tc.model}})
			require.Equal(t, tc.completedErr, err)
			if err == nil {
				require.Equal(t, tc.completions, cres.Choices[0].Text)
			}

			rp := &responses.Params{Request: &responses.Request{Model: tc.model}}
			rres, err := rt.Responses().Complete(ctx, rp)
			require.Equal(t, tc.responsesErr, err)
			for d, err := range rt.Responses().Stream(ctx, rp) {
				require.Equal(t, tc.responsesErr, err)
				if err == nil && d.Usage == nil {
					require.Equal(t, tc.responses, d.Text)
				}
			}
			comp, err := rt.Responses().(responses.Compactor).Compact(ctx, &responses.CompactParams{Request: &responses.CompactRequest{Model: tc.model}})
			require.Equal(t, tc.responsesErr, err)
			if err == nil {
				require.Equal(t, tc.responses, rres.Output[0].Text)
				require.Equal(t, tc.compacted, comp.EncryptedContent)
			}
		})
	}
}

func TestRouterVideos(t *testing.T) {
	t.Parallel()
	rt := newRouter(t)
	ctx := t.Context()
	s, ok := rt.Videos().(videos.Submitter)
	require.True(t, ok, "the router's generator is a videos.Submitter")
	ref, err := s.Submit(ctx, &videos.Task{Model: "up-1"})
	require.NoError(t, err)
	require.Equal(t, "up", ref, "the route's generator submits")
	ref, err = s.Submit(ctx, &videos.Task{Model: "other"})
	require.NoError(t, err)
	require.Empty(t, ref, "a generator that is not a Submitter submits nothing")
	res, err := rt.Videos().Generate(ctx, &videos.Task{Model: "other"}, func(int) {})
	require.NoError(t, err)
	require.Equal(t, "default", res.RemixedFromVideoID)
	_, err = rt.Videos().Generate(ctx, &videos.Task{Model: "own-1"}, func(int) {})
	require.Equal(t, apierrors.ModelNotFound("own-1"), err, "a route without a generator")
}

func TestRouterWithoutADefaultRoute(t *testing.T) {
	t.Parallel()
	rt, err := router.New(router.Route{Models: []models.Model{model("own")}, Chat: named("own")})
	require.NoError(t, err)
	_, err = rt.Chat().Complete(t.Context(), &chat.Params{Request: &chat.Request{Model: "other"}})
	require.Equal(t, apierrors.ModelNotFound("other"), err)
	require.Nil(t, rt.Completions(), "no route serves completions")
	require.Nil(t, rt.Responses())
	require.Nil(t, rt.Videos())
}

func TestRouterCatalogListsTheRoutesModels(t *testing.T) {
	t.Parallel()
	list, err := newRouter(t).Catalog().List(t.Context())
	require.NoError(t, err)
	var ids []string
	for _, m := range list {
		ids = append(ids, m.ID)
	}
	require.Equal(t, []string{"own-1", "own-2", "up-1"}, ids, "in the order of the routes, the default route's none")
}

func TestNewRefusesRoutesThatDisagree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		routes []router.Route
		err    string
	}{
		{"a model listed twice", []router.Route{
			{Models: []models.Model{model("a"), model("b")}, Chat: named("1")},
			{Models: []models.Model{model("b")}, Chat: named("2")},
		}, `router: New: model "b" is listed by routes 0 and 1`},
		{"two default routes", []router.Route{
			{Chat: named("1")}, {Models: []models.Model{model("a")}}, {Chat: named("2")},
		}, "router: New: routes 0 and 2 are both default routes (without models)"},
		{"a model without an id", []router.Route{
			{Models: []models.Model{{}}, Chat: named("1")},
		}, "router: New: route 0 lists a model without an id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := router.New(tc.routes...)
			require.EqualError(t, err, tc.err)
		})
	}
}
