// Package choices holds what packages chat and completions share: their
// results are choices of text, each streamed as deltas that name their
// choice, with OpenAI's usage (endpoint.Usage) beside them.
package choices

import (
	"context"
	"iter"

	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/pipeline"
)

// Types tells [Family] where a family's values keep what the
// interceptors see: the choices and usage of a result R, the text of an
// output O, and the choice, text and usage of a delta D.
type Types[P, R, O, D any] struct {
	// Call returns the model that p names, the request it carries and the
	// number of choices it asks for.
	Call func(p P) (model string, request any, n int)
	// Result returns the choices and the usage of res.
	Result func(res *R) (*[]O, *endpoint.Usage)
	// Text returns the text of o.
	Text func(o *O) *string
	// Delta returns the choice, text and usage of d.
	Delta func(d *D) (*int, *string, **endpoint.Usage)
}

// Family returns the pipeline.Family named name of a family whose
// results are choices of text: an interceptor's own reply is its text
// as every choice's, and the usage is OpenAI's prompt and completion
// tokens. deltas is the family's Deltas, over its Backend B.
func Family[P, R, O, D any, B pipeline.Completer[P, *R]](name string, t Types[P, R, O, D],
	deltas func(ctx context.Context, b B, p P) iter.Seq2[D, error]) pipeline.Family[P, *R, D] {
	usage := func(u pipeline.Usage) endpoint.Usage {
		return endpoint.Usage{PromptTokens: pipeline.Tokens(u.Input), CompletionTokens: pipeline.Tokens(u.Output)}
	}
	of := func(u *endpoint.Usage) pipeline.Usage {
		return pipeline.Usage{Input: int64(u.PromptTokens), Output: int64(u.CompletionTokens)}
	}
	return pipeline.Family[P, *R, D]{
		Name: name,
		Call: func(p P) (string, any) {
			model, req, _ := t.Call(p)
			return model, req
		},
		Own: func(p P, r *pipeline.Reply) *R {
			_, _, n := t.Call(p)
			res := new(R)
			cs, u := t.Result(res)
			*cs, *u = make([]O, n), usage(r.Usage)
			for i := range *cs {
				*t.Text(&(*cs)[i]) = r.Text
			}
			return res
		},
		Deltas: func(ctx context.Context, b pipeline.Completer[P, *R], p P) iter.Seq2[D, error] {
			return deltas(ctx, b.(B), p)
		},
		Texts: func(res *R, f func(int, *string)) {
			if res != nil {
				cs, _ := t.Result(res)
				for i := range *cs {
					f(i, t.Text(&(*cs)[i]))
				}
			}
		},
		Usage: func(res *R) pipeline.Usage {
			if res == nil {
				return pipeline.Usage{}
			}
			_, u := t.Result(res)
			return of(u)
		},
		SetUsage: func(res *R, u pipeline.Usage) {
			if res != nil {
				_, ru := t.Result(res)
				ru.PromptTokens, ru.CompletionTokens = pipeline.Tokens(u.Input), pipeline.Tokens(u.Output)
			}
		},
		Delta: func(d *D) (int, *string, pipeline.Usage, bool) {
			choice, text, u := t.Delta(d)
			if *u == nil {
				return *choice, text, pipeline.Usage{}, false
			}
			return *choice, text, of(*u), true
		},
		UsageDelta: func(u pipeline.Usage) D {
			var d D
			_, _, du := t.Delta(&d)
			*du = new(endpoint.Usage)
			**du = usage(u)
			return d
		},
	}
}
