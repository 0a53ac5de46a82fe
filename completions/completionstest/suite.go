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
	"fmt"
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
	handler := func(log *suite.Log) http.Handler {
		return completions.NewHandler(models.NewMemoryCatalog(model), b, endpoint.WithLogger(log.Logger()))
	}
	body := func(members string) string { return suite.Body(model.ID, members) }
	tests := []struct {
		name, members string
		choices       int
	}{
		{"APrompt", `"prompt":"Once upon a time"`, 1},
		{"EveryChoice", `"n":2,"prompt":"Once upon a time"`, 2},
		{"EveryPrompt", `"n":2,"prompt":["Once upon a time","In a galaxy"]`, 4},
		{"UpToTheTokenCap", `"max_tokens":3,"prompt":"Count to ten:"`, 1},
	}
	for _, tc := range tests {
		t.Run("Answers"+tc.name, func(t *testing.T) {
			t.Parallel()
			res, log, ok := suite.Complete[completions.Completion](t, handler, path, body(tc.members))
			if ok {
				suite.Check(t, log, checkCompletion(res, tc.choices))
			}
		})
		t.Run("Streams"+tc.name, func(t *testing.T) {
			t.Parallel()
			chunks, log, ok := suite.Stream[completions.Chunk](t, handler, path, body(`"stream":true,"stream_options":{"include_usage":true},`+tc.members))
			if ok {
				suite.Check(t, log, checkStream(chunks, tc.choices))
			}
		})
	}
	suite.RunShared(t, suite.NewBackend[completions.Request, completions.Params, *completions.Result, completions.Delta](b, model, handler, path,
		func(r *completions.Request, m *models.Model) *completions.Params {
			return &completions.Params{Request: r, Model: m}
		},
		func(p *completions.Params) any { return p.Request }),
		`"n":2,"stop":["zzz"],"max_tokens":20,"prompt":["Once upon a time","In a galaxy"]`)
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
	return suite.CheckUsage(&res.Usage)
}

// checkStream checks the chunks of a stream of n choices that ends with a
// usage chunk.
func checkStream(chunks []completions.Chunk, n int) error {
	finished := make([]bool, n)
	usage := 0
	for k, c := range chunks {
		if c.Usage != nil {
			usage++
			if err := suite.CheckUsageChunk(k, len(chunks)-1, len(c.Choices), c.Usage); err != nil {
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
