// Package completionstest holds the conformance suite of
// completions.Backend, for the backends of this repository and for
// embedders' own: run [TestBackend] from an ordinary test, and a backend
// that breaks the contract fails there, with the rule it broke, instead
// of answering clients with a 500.
//
//	func TestMyBackend(t *testing.T) {
//		completionstest.TestBackend(t, mybackend.New(), models.Model{
//			ID: "my-model", EndpointTypes: []models.EndpointType{models.Compat},
//		})
//	}
package completionstest

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"slices"
	"testing"

	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/suite"
	"github.com/gatewaykit/gatewaykit/models"
)

// path is the route the suite posts to.
const path = "/v1/completions"

// TestBackend checks that b keeps the contract of completions.Backend,
// and of completions.StreamingBackend when it is one, for requests of
// model (its catalogue entry: the suite serves a catalogue of that one
// model). It sends b's replies through completions.NewHandler, so the
// handler's own checks apply (a failure shows the handler's log, where a
// backend's error goes), and checks the replies the client would get:
//
//   - a reply holds exactly the choices asked for (n for each prompt),
//     each with a finish reason of the API's;
//   - a stream ends each choice with exactly one finish reason, never
//     sends a choice after it, and ends with the usage chunk when asked
//     and [DONE];
//   - usage counts are not negative, and the total is their sum;
//   - Complete and Stream leave the request as they found it, return once
//     their context is cancelled, and Stream stops as soon as its consumer
//     does;
//   - b is safe for concurrent use (run the suite with -race).
//
// A backend may refuse what it cannot do (n > 1, several prompts) with a
// client error (an *apierrors.Error with a 4xx status): the check is then
// logged and skipped. Every subtest runs in parallel with the others.
func TestBackend(t *testing.T, b completions.Backend, model models.Model) {
	t.Helper()
	s := &tester{b: b, model: model}
	tests := []struct {
		name, members string
		choices       int
	}{
		{"AnswersAPrompt", `"prompt":"Once upon a time"`, 1},
		{"AnswersEveryChoice", `"n":2,"prompt":"Once upon a time"`, 2},
		{"AnswersEveryPrompt", `"n":2,"prompt":["Once upon a time","In a galaxy"]`, 4},
		{"StopsAtTheTokenCap", `"max_tokens":3,"prompt":"Count to ten:"`, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			log := &suite.Log{}
			rep := suite.Post(s.handler(log), path, s.body(tc.members))
			if !suite.Answered(t, log, rep) {
				return
			}
			var res completions.Completion
			if err := json.Unmarshal(rep.Body, &res); err != nil {
				suite.Fail(t, log, "the reply does not decode: %v: %s", err, rep.Body)
			}
			suite.Check(t, log, checkCompletion(&res, tc.choices))
		})
		t.Run("Streams"+tc.name[len("Answers"):], func(t *testing.T) {
			t.Parallel()
			log := &suite.Log{}
			rep := suite.Post(s.handler(log), path, s.body(`"stream":true,"stream_options":{"include_usage":true},`+tc.members))
			if !suite.Answered(t, log, rep) {
				return
			}
			var chunks []completions.Chunk
			for _, data := range suite.DataEvents(t, log, rep.Body) {
				var c completions.Chunk
				if err := json.Unmarshal(data, &c); err != nil {
					suite.Fail(t, log, "a chunk does not decode: %v: %s", err, data)
				}
				chunks = append(chunks, c)
			}
			suite.Check(t, log, checkStream(chunks, tc.choices))
		})
	}
	var stream func(context.Context, *completions.Params) iter.Seq2[completions.Delta, error]
	if sb, ok := b.(completions.StreamingBackend); ok {
		stream = sb.Stream
	}
	suite.RunShared(t, suite.Backend[completions.Params, completions.Delta]{
		Handler: s.handler,
		Path:    path,
		Body:    s.body,
		Params:  s.params,
		Request: func(p *completions.Params) any { return p.Request },
		Complete: func(ctx context.Context, p *completions.Params) error {
			_, err := b.Complete(ctx, p)
			return err
		},
		Stream: stream,
	}, `"n":2,"stop":["zzz"],"max_tokens":20,"prompt":["Once upon a time","In a galaxy"]`)
}

type tester struct {
	b     completions.Backend
	model models.Model
}

func (s *tester) body(members string) string {
	m, _ := json.Marshal(s.model.ID)
	return `{"model":` + string(m) + `,` + members + `}`
}

func (s *tester) handler(log *suite.Log) http.Handler {
	return completions.NewHandler(models.NewMemoryCatalog(s.model), s.b, endpoint.WithLogger(log.Logger()))
}

func (s *tester) params(t *testing.T, body string) *completions.Params {
	t.Helper()
	var req completions.Request
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	m := s.model
	return &completions.Params{Request: &req, Model: &m}
}

// finishReasons are the finish reasons of the API.
var finishReasons = []endpoint.FinishReason{endpoint.FinishStop, endpoint.FinishLength, endpoint.FinishContentFilter}

// checkCompletion checks a reply of n choices.
func checkCompletion(res *completions.Completion, n int) error {
	if len(res.Choices) != n {
		return fmt.Errorf("the reply has %d choices, want %d", len(res.Choices), n)
	}
	for i, c := range res.Choices {
		switch {
		case c.Index != i:
			return fmt.Errorf("choice %d has index %d", i, c.Index)
		case !slices.Contains(finishReasons, c.FinishReason):
			return fmt.Errorf("choice %d has finish reason %q, not one of %v", i, c.FinishReason, finishReasons)
		}
	}
	return checkUsage(&res.Usage)
}

func checkUsage(u *endpoint.Usage) error {
	if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		return fmt.Errorf("usage %+v: negative, or total_tokens is not prompt_tokens + completion_tokens", *u)
	}
	return nil
}

// checkStream checks the chunks of a stream of n choices that ends with a
// usage chunk.
func checkStream(chunks []completions.Chunk, n int) error {
	finished := make([]bool, n)
	usage := 0
	for k, c := range chunks {
		if c.Usage != nil {
			usage++
			if len(c.Choices) != 0 || k != len(chunks)-1 {
				return fmt.Errorf("chunk %d carries usage but is not the final chunk, with no choices", k)
			}
			if err := checkUsage(c.Usage); err != nil {
				return err
			}
			continue
		}
		if len(c.Choices) == 0 {
			return fmt.Errorf("chunk %d has no choice and no usage", k)
		}
		for _, ch := range c.Choices {
			switch {
			case ch.Index < 0 || ch.Index >= n:
				return fmt.Errorf("chunk %d is for choice %d of %d", k, ch.Index, n)
			case finished[ch.Index]:
				return fmt.Errorf("chunk %d continues choice %d after its finish reason", k, ch.Index)
			case ch.FinishReason == nil:
				continue
			case !slices.Contains(finishReasons, *ch.FinishReason):
				return fmt.Errorf("choice %d finishes with %q, not one of %v", ch.Index, *ch.FinishReason, finishReasons)
			}
			finished[ch.Index] = true
		}
	}
	for i, f := range finished {
		if !f {
			return fmt.Errorf("choice %d never finished", i)
		}
	}
	if usage != 1 {
		return fmt.Errorf("%d usage chunks, want 1 (stream_options.include_usage)", usage)
	}
	return nil
}
