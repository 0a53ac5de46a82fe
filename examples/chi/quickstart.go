package main

import (
	"context"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
)

// newQuickstart is the first section of the README, verbatim between
// its first and last lines (quickstart_test.go checks it): the kit
// inside an existing chi service, with the service's own sign-in, its
// own model and an interceptor.
func newQuickstart(ctx context.Context) (http.Handler, error) {
	// Your users, each a key without a secret: charged, rate-limited and scoped as an API key is.
	keys := auth.NewMemoryKeyStore()
	err := keys.PutKey(ctx, "", auth.Key{ID: "user-42", Owner: "user-42", Quota: auth.LimitedQuota(100_000)})
	if err != nil {
		return nil, err
	}
	identify := func(r *http.Request) (string, error) { return signedInUser(r), nil } // "": 401

	// Your model, behind the one interface that the handlers ask.
	catalog := models.NewMemoryCatalog(models.Model{ID: "acme-llm", EndpointTypes: []models.EndpointType{models.Compat}})
	var backend chat.Backend = acmeLLM{}

	// An interceptor: prompts that name a secret are refused (400, charged nothing).
	guard := func(next endpoint.Func) endpoint.Func {
		return func(ctx context.Context, c *endpoint.Call) (*endpoint.Reply, error) {
			if strings.Contains(c.Prompt(), "Project Nightingale") {
				return nil, apierrors.InvalidRequest("", "This prompt names a confidential project.")
			}
			return next(ctx, c)
		}
	}

	r := chi.NewRouter() // your router, your routes
	r.Group(func(r chi.Router) {
		r.Use(auth.Middleware(keys, auth.WithAuthenticators(auth.Identities(keys, identify))))
		for _, rt := range chat.Routes(chat.NewHandler(catalog, backend, endpoint.WithInterceptors(guard))) {
			r.Method(rt.Method, rt.Path, rt.Handler) // POST /v1/chat/completions
		}
	})
	return r, nil
}

// acmeLLM is the service's own model: a chat.Backend.
type acmeLLM struct{}

func (acmeLLM) Complete(_ context.Context, p *chat.Params) (*chat.Result, error) {
	out := make([]chat.Output, p.Request.Choices())
	for i := range out {
		out[i].Content = "Hello from Acme."
	}
	return &chat.Result{Choices: out, Usage: chat.Usage{PromptTokens: 5, CompletionTokens: 4}}, nil
}

// signedInUser is the service's sign-in: the key id of the user of the
// request's session, "" for none.
func signedInUser(r *http.Request) string {
	if r.Header.Get("X-Session") == "sess-42" {
		return "user-42"
	}
	return ""
}
