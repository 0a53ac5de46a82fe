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
	"context"
	"encoding/json"
	"fmt"
	"iter"
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
	s := &tester{b: b, model: model}

	t.Run("AnswersOneChoice", func(t *testing.T) {
		t.Parallel()
		res, log, ok := s.complete(t, s.body(`"messages":[{"role":"user","content":"Say hello."}]`))
		if ok {
			suite.Check(t, log, checkCompletion(res, 1))
		}
	})
	t.Run("AnswersEveryChoice", func(t *testing.T) {
		t.Parallel()
		res, log, ok := s.complete(t, s.body(`"n":3,"messages":[{"role":"user","content":"Say hello three times."}]`))
		if ok {
			suite.Check(t, log, checkCompletion(res, 3))
		}
	})
	t.Run("AnswersAConversation", func(t *testing.T) {
		t.Parallel()
		res, log, ok := s.complete(t, s.body(`"messages":[{"role":"system","content":"Be brief."},`+
			`{"role":"user","content":"Hi."},{"role":"assistant","content":"Hello."},{"role":"user","content":[{"type":"text","text":"Count to three."}]}]`))
		if ok {
			suite.Check(t, log, checkCompletion(res, 1))
		}
	})
	t.Run("CallsANamedTool", func(t *testing.T) {
		t.Parallel()
		res, log, ok := s.complete(t, s.body(toolRequest))
		if !ok {
			return
		}
		suite.Check(t, log, checkCompletion(res, 1))
		if calls := res.Choices[0].Message.ToolCalls; len(calls) > 0 {
			if res.Choices[0].FinishReason != chat.FinishToolCalls {
				t.Logf("a reply with tool calls finishes with %q (tool_calls is usual)", res.Choices[0].FinishReason)
			}
		} else {
			t.Logf("the backend called no tool though tool_choice named one")
		}
	})
	t.Run("StreamsTheReply", func(t *testing.T) {
		t.Parallel()
		chunks, log, ok := s.stream(t, s.body(`"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Say hello."}]`))
		if ok {
			suite.Check(t, log, checkStream(chunks, 1, true))
		}
	})
	t.Run("StreamsEveryChoice", func(t *testing.T) {
		t.Parallel()
		chunks, log, ok := s.stream(t, s.body(`"n":2,"stream":true,"messages":[{"role":"user","content":"Say hello twice."}]`))
		if ok {
			suite.Check(t, log, checkStream(chunks, 2, false))
		}
	})
	t.Run("StreamsToolCalls", func(t *testing.T) {
		t.Parallel()
		chunks, log, ok := s.stream(t, s.body(`"stream":true,"stream_options":{"include_usage":true},`+toolRequest))
		if ok {
			suite.Check(t, log, checkStream(chunks, 1, true))
		}
	})

	suite.RunShared(t, suite.Backend[chat.Params, chat.Delta]{
		Handler: s.handler,
		Path:    path,
		Body:    s.body,
		Params:  s.params,
		Request: func(p *chat.Params) any { return p.Request },
		Complete: func(ctx context.Context, p *chat.Params) error {
			_, err := b.Complete(ctx, p)
			return err
		},
		Stream: streamOf(b),
	}, `"n":2,"stop":["zzz"],"max_tokens":50,`+toolRequest)
}

// streamOf returns b's Stream, or nil when b does not stream.
func streamOf(b chat.Backend) func(context.Context, *chat.Params) iter.Seq2[chat.Delta, error] {
	if sb, ok := b.(chat.StreamingBackend); ok {
		return sb.Stream
	}
	return nil
}

// path is the route the suite posts to.
const path = "/v1/chat/completions"

// toolRequest is the members of a request that names a tool to call.
const toolRequest = `"tools":[{"type":"function","function":{"name":"get_weather","description":"The weather in a city.",` +
	`"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],` +
	`"tool_choice":{"type":"function","function":{"name":"get_weather"}},` +
	`"messages":[{"role":"user","content":"What is the weather in Paris?"}]`

type tester struct {
	b     chat.Backend
	model models.Model
}

// body is a request for the suite's model with members.
func (s *tester) body(members string) string {
	m, _ := json.Marshal(s.model.ID)
	return `{"model":` + string(m) + `,` + members + `}`
}

// handler serves the suite's model through b, logging into log.
func (s *tester) handler(log *suite.Log) http.Handler {
	return chat.NewHandler(models.NewMemoryCatalog(s.model), s.b, endpoint.WithLogger(log.Logger()))
}

// params decodes body into the Params that the handler would give b.
func (s *tester) params(t *testing.T, body string) *chat.Params {
	t.Helper()
	var req chat.Request
	if err := json.Unmarshal([]byte(body), &req); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	m := s.model
	return &chat.Params{Request: &req, Model: &m}
}

// complete sends body and decodes the reply; ok is false when the backend
// refused the request with a client error (logged).
func (s *tester) complete(t *testing.T, body string) (_ *chat.Completion, _ *suite.Log, ok bool) {
	t.Helper()
	log := &suite.Log{}
	rep := suite.Post(s.handler(log), path, body)
	if !suite.Answered(t, log, rep) {
		return nil, log, false
	}
	var res chat.Completion
	if err := json.Unmarshal(rep.Body, &res); err != nil {
		suite.Fail(t, log, "the reply does not decode: %v: %s", err, rep.Body)
	}
	return &res, log, true
}

// stream sends body and parses the stream into its chunks (the data of
// each event but the final [DONE], which it checks).
func (s *tester) stream(t *testing.T, body string) (_ []chat.Chunk, _ *suite.Log, ok bool) {
	t.Helper()
	log := &suite.Log{}
	rep := suite.Post(s.handler(log), path, body)
	if !suite.Answered(t, log, rep) {
		return nil, log, false
	}
	var chunks []chat.Chunk
	for _, data := range suite.DataEvents(t, log, rep.Body) {
		var c chat.Chunk
		if err := json.Unmarshal(data, &c); err != nil {
			suite.Fail(t, log, "a chunk does not decode: %v: %s", err, data)
		}
		chunks = append(chunks, c)
	}
	return chunks, log, true
}

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
	return checkUsage(&res.Usage)
}

func checkUsage(u *chat.Usage) error {
	if u.PromptTokens < 0 || u.CompletionTokens < 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		return fmt.Errorf("usage %+v: negative, or total_tokens is not prompt_tokens + completion_tokens", *u)
	}
	return nil
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
