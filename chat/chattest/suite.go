// Package chattest holds the conformance suite of chat.Backend, for the
// backends of this repository and for embedders' own: run [TestBackend]
// from an ordinary test, and a backend that breaks the contract fails
// there, with the rule it broke, instead of answering clients with a 500.
//
//	func TestMyBackend(t *testing.T) {
//		chattest.TestBackend(t, mybackend.New(), models.Model{
//			ID: "my-model", EndpointTypes: []models.EndpointType{models.Compat},
//		})
//	}
package chattest

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	"github.com/gatewaykit/gatewaykit/internal/suite"
	"github.com/gatewaykit/gatewaykit/models"
)

// TestBackend checks that b keeps the contract of chat.Backend, and of
// chat.StreamingBackend when it is one, for requests of model (its
// catalogue entry: the suite serves a catalogue of that one model). It
// sends b's replies through chat.NewHandler, so the handler's own checks
// of the streaming rules apply (one failure names the rule, from the
// handler's log), and checks the replies the client would get:
//
//   - a reply holds exactly the choices asked for (n), each with content
//     or tool calls and a finish reason of the API's;
//   - a stream gives each choice a first chunk with the role, ends each
//     choice with exactly one finish reason, never sends a choice after
//     it, numbers tool calls 0, 1, 2… with the id and name in their first
//     fragment, and ends with the usage chunk and [DONE];
//   - usage counts are not negative;
//   - Complete and Stream leave the request as they found it, return once
//     their context is cancelled, and Stream stops as soon as its consumer
//     does;
//   - b is safe for concurrent use (run the suite with -race).
//
// A backend may refuse what it cannot do (n > 1, tools) with a client
// error (an *apierrors.Error with a 4xx status): the check is then logged
// and skipped. Every subtest runs in parallel with the others.
func TestBackend(t *testing.T, b chat.Backend, model models.Model) {
	t.Helper()
	handler := func(log *suite.Log) http.Handler {
		return chat.NewHandler(models.NewMemoryCatalog(model), b, endpoint.WithLogger(log.Logger()))
	}
	body := func(members string) string { return suite.Body(model.ID, members) }
	tests := []struct {
		name, members string
		choices       int
	}{
		{"OneChoice", `"messages":[{"role":"user","content":"Say hello."}]`, 1},
		{"EveryChoice", `"n":3,"messages":[{"role":"user","content":"Say hello three times."}]`, 3},
		{"AConversation", `"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi."},` +
			`{"role":"assistant","content":"Hello."},{"role":"user","content":[{"type":"text","text":"Count to three."}]}]`, 1},
		{"ANamedToolCall", toolRequest, 1},
	}
	for _, tc := range tests {
		t.Run("Answers"+tc.name, func(t *testing.T) {
			t.Parallel()
			res, log, ok := suite.Complete[chat.Completion](t, handler, path, body(tc.members))
			if ok {
				suite.Check(t, log, checkCompletion(res, tc.choices))
			}
		})
		t.Run("Streams"+tc.name, func(t *testing.T) {
			t.Parallel()
			chunks, log, ok := suite.Stream[chat.Chunk](t, handler, path, body(`"stream":true,"stream_options":{"include_usage":true},`+tc.members))
			if ok {
				suite.Check(t, log, checkStream(chunks, tc.choices, true))
			}
		})
	}
	t.Run("StreamsWithoutUsage", func(t *testing.T) {
		t.Parallel()
		chunks, log, ok := suite.Stream[chat.Chunk](t, handler, path, body(`"stream":true,"messages":[{"role":"user","content":"Say hello."}]`))
		if ok {
			suite.Check(t, log, checkStream(chunks, 1, false))
		}
	})

	suite.RunShared(t, suite.NewBackend[chat.Request, chat.Params, *chat.Result, chat.Delta](b, model, handler, path,
		func(r *chat.Request, m *models.Model) *chat.Params { return &chat.Params{Request: r, Model: m} },
		func(p *chat.Params) any { return p.Request }),
		`"n":2,"stop":["zzz"],"max_tokens":50,`+toolRequest)
}

// path is the route the suite posts to.
const path = "/v1/chat/completions"

// toolRequest is the members of a request that names a tool to call.
const toolRequest = `"tools":[{"type":"function","function":{"name":"get_weather","description":"The weather in a city.",` +
	`"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],` +
	`"tool_choice":{"type":"function","function":{"name":"get_weather"}},` +
	`"messages":[{"role":"user","content":"What is the weather in Paris?"}]`

// finishReasons are the finish reasons of the API.
var finishReasons = []chat.FinishReason{chat.FinishStop, chat.FinishLength, chat.FinishToolCalls, chat.FinishContentFilter}

// checkCompletion checks a reply of n choices.
func checkCompletion(res *chat.Completion, n int) error {
	if len(res.Choices) != n {
		return fmt.Errorf("the reply has %d choices, want %d", len(res.Choices), n)
	}
	for i, c := range res.Choices {
		switch {
		case c.Index != i:
			return fmt.Errorf("choice %d has index %d", i, c.Index)
		case (c.Message.Content == nil || *c.Message.Content == "") && len(c.Message.ToolCalls) == 0:
			return fmt.Errorf("choice %d has neither content nor tool calls", i)
		case !slices.Contains(finishReasons, c.FinishReason):
			return fmt.Errorf("choice %d has finish reason %q, not one of %v", i, c.FinishReason, finishReasons)
		}
		for j, tc := range c.Message.ToolCalls {
			if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" {
				return fmt.Errorf("tool call %d of choice %d lacks its id, type function or name", j, i)
			}
		}
	}
	return suite.CheckUsage(&res.Usage)
}

// checkStream checks the chunks of a stream of n choices, which ends with
// a usage chunk if wantUsage.
func checkStream(chunks []chat.Chunk, n int, wantUsage bool) error {
	type state struct {
		started, finished bool
		calls             int
	}
	st := make([]state, n)
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
			if ch.Index < 0 || ch.Index >= n {
				return fmt.Errorf("chunk %d is for choice %d of a request with n=%d", k, ch.Index, n)
			}
			s := &st[ch.Index]
			switch {
			case s.finished:
				return fmt.Errorf("chunk %d continues choice %d after its finish reason", k, ch.Index)
			case !s.started && ch.Delta.Role != "assistant":
				return fmt.Errorf("the first chunk of choice %d has role %q, want assistant", ch.Index, ch.Delta.Role)
			}
			s.started = true
			for _, tc := range ch.Delta.ToolCalls {
				switch {
				case tc.Index == s.calls:
					if tc.ID == "" || tc.Function.Name == "" || tc.Type != "function" {
						return fmt.Errorf("the first fragment of tool call %d of choice %d lacks its id, name or type", tc.Index, ch.Index)
					}
					s.calls++
				case tc.Index > s.calls || tc.Index < 0:
					return fmt.Errorf("tool call index %d of choice %d is not the next one (%d)", tc.Index, ch.Index, s.calls)
				}
			}
			if ch.FinishReason != nil {
				if !slices.Contains(finishReasons, *ch.FinishReason) {
					return fmt.Errorf("choice %d finishes with %q, not one of %v", ch.Index, *ch.FinishReason, finishReasons)
				}
				s.finished = true
			}
		}
	}
	for i, s := range st {
		if !s.finished {
			return fmt.Errorf("choice %d never finished", i)
		}
	}
	if want := map[bool]int{true: 1, false: 0}[wantUsage]; usage != want {
		return fmt.Errorf("%d usage chunks, want %d (stream_options.include_usage: %t)", usage, want, wantUsage)
	}
	return nil
}
