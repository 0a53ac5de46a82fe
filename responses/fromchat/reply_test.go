package fromchat_test

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/endpointtest"
	"github.com/gatewaykit/gatewaykit/responses"
	"github.com/gatewaykit/gatewaykit/responses/fromchat"
)

type (
	chatFunc       = endpointtest.FuncBackend[chat.Params, chat.Result]
	chatStreamFunc = endpointtest.FuncStreamingBackend[chat.Params, chat.Result, chat.Delta]
)

// hello is the params of a request of model "m" that says Hi.
func hello(t testing.TB) *responses.Params { return params(t, "", `{"model":"m","input":"Hi"}`) }

// TestComplete turns whole chat replies into responses results.
func TestComplete(t *testing.T) {
	t.Parallel()
	call := func(id, name, args string) chat.ToolCall {
		return chat.ToolCall{ID: id, Type: "function", Function: chat.FunctionCall{Name: name, Arguments: args}}
	}
	tests := []struct {
		name  string
		reply chat.Result
		want  responses.Result
	}{
		{"text",
			chat.Result{Choices: []chat.Output{{Content: "Hello."}}, Usage: chat.Usage{PromptTokens: 3, CompletionTokens: 2}},
			responses.Result{Output: []responses.Output{{Text: "Hello."}}, Usage: responses.Usage{InputTokens: 3, OutputTokens: 2}}},
		{"reasoning, text and two tool calls, in order",
			chat.Result{Model: "m-2025", Choices: []chat.Output{{Reasoning: "Think.", Content: "Calling.",
				ToolCalls: []chat.ToolCall{call("c1", "f", `{"a":1}`), call("", "g", "{}")}, FinishReason: chat.FinishToolCalls}},
				Usage: chat.Usage{PromptTokens: 10, CompletionTokens: 20, CompletionTokensDetails: &chat.CompletionTokensDetails{ReasoningTokens: 4}}},
			responses.Result{Model: "m-2025", Output: []responses.Output{{Reasoning: "Think."}, {Text: "Calling."},
				{Call: &responses.FunctionCall{CallID: "c1", Name: "f", Arguments: `{"a":1}`}}, {Call: &responses.FunctionCall{Name: "g", Arguments: "{}"}}},
				Usage: responses.Usage{InputTokens: 10, OutputTokens: 20, OutputTokensDetails: responses.OutputTokensDetails{ReasoningTokens: 4}}}},
		{"cached and cache-write prompt tokens are the input's details (issue 26)",
			chat.Result{Choices: []chat.Output{{Content: "Hello."}}, Usage: chat.Usage{PromptTokens: 100, CompletionTokens: 2,
				PromptTokensDetails: &chat.PromptTokensDetails{CachedTokens: 60, AudioTokens: 1, CacheWriteTokens: 30}}},
			responses.Result{Output: []responses.Output{{Text: "Hello."}}, Usage: responses.Usage{InputTokens: 100, OutputTokens: 2,
				InputTokensDetails: responses.InputTokensDetails{CachedTokens: 60, CacheWriteTokens: 30}}}},
		{"tool calls without text make no message",
			chat.Result{Choices: []chat.Output{{ToolCalls: []chat.ToolCall{call("c1", "f", "{}")}}}},
			responses.Result{Output: []responses.Output{{Call: &responses.FunctionCall{CallID: "c1", Name: "f", Arguments: "{}"}}}}},
		{"reasoning cut by the cap makes no message",
			chat.Result{Choices: []chat.Output{{Reasoning: "Let me th", FinishReason: chat.FinishLength}}},
			responses.Result{Output: []responses.Output{{Reasoning: "Let me th"}}, Incomplete: responses.ReasonMaxOutputTokens}},
		{"an empty reply is one empty message",
			chat.Result{Choices: []chat.Output{{FinishReason: chat.FinishContentFilter}}},
			responses.Result{Output: []responses.Output{{}}, Incomplete: responses.ReasonContentFilter}},
		{"a reply cut by the cap",
			chat.Result{Choices: []chat.Output{{Content: "One, two", FinishReason: chat.FinishLength}}},
			responses.Result{Output: []responses.Output{{Text: "One, two"}}, Incomplete: responses.ReasonMaxOutputTokens}},
		{"a stop is complete",
			chat.Result{Choices: []chat.Output{{Content: "Done.", FinishReason: chat.FinishStop}}},
			responses.Result{Output: []responses.Output{{Text: "Done."}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := fromchat.New(chatFunc{CompleteFunc: func(context.Context, *chat.Params) (*chat.Result, error) { return &tc.reply, nil }})
			got, err := b.Complete(t.Context(), hello(t))
			require.NoError(t, err)
			if diff := cmp.Diff(&tc.want, got); diff != "" {
				t.Errorf("result mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompleteErrors: the chat backend's errors pass through unchanged,
// and a reply of another number of choices is a 500.
func TestCompleteErrors(t *testing.T) {
	t.Parallel()
	refused := apierrors.InvalidRequest("messages", "no")
	b := fromchat.New(chatFunc{CompleteFunc: func(context.Context, *chat.Params) (*chat.Result, error) { return nil, refused }})
	_, err := b.Complete(t.Context(), hello(t))
	require.Same(t, refused, err)

	for _, res := range []*chat.Result{nil, {}, {Choices: make([]chat.Output, 2)}} {
		b := fromchat.New(chatFunc{CompleteFunc: func(context.Context, *chat.Params) (*chat.Result, error) { return res, nil }})
		_, err := b.Complete(t.Context(), hello(t))
		requireStatus(t, err, 500)
	}

	_, err = b.Complete(t.Context(), params(t, "", `{"model":"m","input":"Hi","tools":[{"type":"web_search"}]}`))
	requireStatus(t, err, 400)
}

// TestStream turns chat streams into responses deltas: a change of kind
// begins the next item, and the finish reason and the usage go on as
// they come.
func TestStream(t *testing.T) {
	t.Parallel()
	usage := &chat.Usage{PromptTokens: 5, CompletionTokens: 9, CompletionTokensDetails: &chat.CompletionTokensDetails{ReasoningTokens: 3},
		PromptTokensDetails: &chat.PromptTokensDetails{CachedTokens: 2}}
	rusage := &responses.Usage{InputTokens: 5, OutputTokens: 9, OutputTokensDetails: responses.OutputTokensDetails{ReasoningTokens: 3},
		InputTokensDetails: responses.InputTokensDetails{CachedTokens: 2}}
	tc := func(index int, id, name, args string) []chat.ToolCallDelta {
		return []chat.ToolCallDelta{{Index: index, ID: id, Name: name, Arguments: args}}
	}
	tests := []struct {
		name   string
		deltas []chat.Delta
		want   []responses.Delta
	}{
		{"reasoning, then text",
			[]chat.Delta{{Reasoning: "Hm"}, {Reasoning: "m."}, {Content: "Hel"}, {Content: "lo."}, {FinishReason: chat.FinishStop}, {Usage: usage}},
			[]responses.Delta{{Item: 0, Reasoning: "Hm"}, {Item: 0, Reasoning: "m."}, {Item: 1, Text: "Hel"}, {Item: 1, Text: "lo."}, {Item: 1, Usage: rusage}}},
		{"text, then two tool calls",
			[]chat.Delta{{Content: "Let me see."}, {ToolCalls: tc(0, "c1", "f", `{"a"`)}, {ToolCalls: tc(0, "", "", ":1}")}, {ToolCalls: tc(0, "", "", "")},
				{ToolCalls: []chat.ToolCallDelta{{Index: 1, ID: "c2", Name: "g"}, {Index: 1, Arguments: "{}"}}}, {FinishReason: chat.FinishToolCalls, Usage: usage}},
			[]responses.Delta{{Item: 0, Text: "Let me see."}, {Item: 1, Call: &responses.FunctionCall{CallID: "c1", Name: "f", Arguments: `{"a"`}},
				{Item: 1, Arguments: ":1}"}, {Item: 2, Call: &responses.FunctionCall{CallID: "c2", Name: "g"}}, {Item: 2, Arguments: "{}"}, {Item: 2, Usage: rusage}}},
		{"one delta of every kind",
			[]chat.Delta{{Reasoning: "R", Content: "T", ToolCalls: tc(0, "c1", "f", "{}"), FinishReason: chat.FinishLength, Usage: usage}},
			[]responses.Delta{{Item: 0, Reasoning: "R"}, {Item: 1, Text: "T"}, {Item: 2, Call: &responses.FunctionCall{CallID: "c1", Name: "f", Arguments: "{}"}},
				{Item: 2, Incomplete: responses.ReasonMaxOutputTokens, Usage: rusage}}},
		{"text again after reasoning again is a new item each time",
			[]chat.Delta{{Content: "A"}, {Reasoning: "B"}, {Content: "C"}},
			[]responses.Delta{{Item: 0, Text: "A"}, {Item: 1, Reasoning: "B"}, {Item: 2, Text: "C"}}},
		{"a role chunk and usage estimates belong to no item",
			[]chat.Delta{{}, {Usage: usage}, {Content: "Hi"}},
			[]responses.Delta{{Item: 0, Usage: rusage}, {Item: 0, Text: "Hi"}}},
		{"an empty reply is one empty message",
			[]chat.Delta{{FinishReason: chat.FinishContentFilter}, {Usage: usage}},
			[]responses.Delta{{Item: 0, Incomplete: responses.ReasonContentFilter}, {Item: 0, Usage: rusage}, {Item: 0}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := collect(fromchat.New(chatStreamFunc{StreamFunc: endpointtest.Deltas[chat.Params](tc.deltas...)}).Stream(t.Context(), hello(t)))
			require.NoError(t, err)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("deltas mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStreamErrors: the chat backend's errors pass through unchanged; a
// stream that the responses format cannot carry is a 500 after what it
// could carry; a request it cannot carry is its 400, and the chat backend
// is not asked.
func TestStreamErrors(t *testing.T) {
	t.Parallel()
	failed := apierrors.BadGateway("The upstream failed.", nil)
	tests := []struct {
		name   string
		deltas []chat.Delta
		err    error
		want   []responses.Delta
		status int
	}{
		{"the chat backend's error", []chat.Delta{{Content: "Hi"}}, failed, []responses.Delta{{Item: 0, Text: "Hi"}}, 502},
		{"another choice", []chat.Delta{{Content: "Hi"}, {Choice: 1, Content: "Ho"}}, nil, []responses.Delta{{Item: 0, Text: "Hi"}}, 500},
		{"a tool call resumed after the next item began",
			[]chat.Delta{{ToolCalls: []chat.ToolCallDelta{{Index: 0, Name: "f"}}}, {ToolCalls: []chat.ToolCallDelta{{Index: 1, Name: "g"}}},
				{ToolCalls: []chat.ToolCallDelta{{Index: 0, Arguments: "{}"}}}}, nil,
			[]responses.Delta{{Item: 0, Call: &responses.FunctionCall{Name: "f"}}, {Item: 1, Call: &responses.FunctionCall{Name: "g"}}}, 500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stream := func(context.Context, *chat.Params) iter.Seq2[chat.Delta, error] {
				return func(yield func(chat.Delta, error) bool) {
					for _, d := range tc.deltas {
						if !yield(d, nil) {
							return
						}
					}
					if tc.err != nil {
						yield(chat.Delta{}, tc.err)
					}
				}
			}
			got, err := collect(fromchat.New(chatStreamFunc{StreamFunc: stream}).Stream(t.Context(), hello(t)))
			requireStatus(t, err, tc.status)
			if tc.err != nil {
				require.Same(t, tc.err, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("deltas before the error (-want +got):\n%s", diff)
			}
		})
	}

	t.Run("a request the chat format cannot carry", func(t *testing.T) {
		t.Parallel()
		asked := false
		b := fromchat.New(chatStreamFunc{StreamFunc: func(context.Context, *chat.Params) iter.Seq2[chat.Delta, error] {
			asked = true
			return nil
		}})
		_, err := collect(b.Stream(t.Context(), params(t, "", `{"model":"m","input":[{"type":"item_reference","id":"x"}]}`)))
		requireStatus(t, err, 400)
		require.False(t, asked)
	})
}

// TestStreamOfABackendThatDoesNotStream: its whole reply, in pieces, as
// Complete gives it.
func TestStreamOfABackendThatDoesNotStream(t *testing.T) {
	t.Parallel()
	b := fromchat.New(chatFunc{CompleteFunc: func(context.Context, *chat.Params) (*chat.Result, error) {
		return &chat.Result{Choices: []chat.Output{{Reasoning: "R", Content: "T", ToolCalls: []chat.ToolCall{{ID: "c1", Function: chat.FunctionCall{Name: "f", Arguments: "{}"}}}}},
			Usage: chat.Usage{PromptTokens: 1, CompletionTokens: 2}}, nil
	}})
	got, err := collect(b.Stream(t.Context(), hello(t)))
	require.NoError(t, err)
	want := []responses.Delta{{Item: 0, Reasoning: "R"}, {Item: 1, Text: "T"}, {Item: 2, Call: &responses.FunctionCall{CallID: "c1", Name: "f", Arguments: "{}"}},
		{Item: 2, Usage: &responses.Usage{InputTokens: 1, OutputTokens: 2}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deltas mismatch (-want +got):\n%s", diff)
	}
}

// collect ranges over a stream until its end or its first error, and
// returns its deltas (their Call and Usage copied, as the handler copies
// them) and the error.
func collect(seq iter.Seq2[responses.Delta, error]) ([]responses.Delta, error) {
	var out []responses.Delta
	for d, err := range seq {
		if err != nil {
			return out, err
		}
		if d.Call != nil {
			c := *d.Call
			d.Call = &c
		}
		if d.Usage != nil {
			u := *d.Usage
			d.Usage = &u
		}
		out = append(out, d)
	}
	return out, nil
}

// requireStatus checks that err is an *apierrors.Error of status, or nil
// when status is 0.
func requireStatus(t testing.TB, err error, status int) {
	t.Helper()
	if status == 0 {
		require.NoError(t, err)
		return
	}
	var e *apierrors.Error
	require.True(t, errors.As(err, &e), "%v", err)
	require.Equal(t, status, e.Status, "%v", err)
}
