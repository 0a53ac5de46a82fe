package fromchat

import (
	"fmt"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/responses"
)

// result is the responses result of a chat result: the reasoning, the
// text and the tool calls of its one choice become output items, in that
// order; a reply of none of them is one empty message.
func result(res *chat.Result) (*responses.Result, error) {
	if res == nil || len(res.Choices) != 1 {
		n := 0
		if res != nil {
			n = len(res.Choices)
		}
		return nil, apierrors.Internal(fmt.Errorf("fromchat: the chat backend returned %d choices for a request of one", n))
	}
	o := &res.Choices[0]
	out := &responses.Result{Model: res.Model, Usage: usage(&res.Usage), Incomplete: incompleteReason(o.FinishReason)}
	if o.Reasoning != "" {
		out.Output = append(out.Output, responses.Output{Reasoning: o.Reasoning})
	}
	if o.Content != "" || o.Reasoning == "" && len(o.ToolCalls) == 0 {
		out.Output = append(out.Output, responses.Output{Text: o.Content})
	}
	for _, tc := range o.ToolCalls {
		out.Output = append(out.Output, responses.Output{Call: &responses.FunctionCall{CallID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments}})
	}
	return out, nil
}

// incompleteReason is the incomplete reason of a chat finish reason: ""
// for a reply that ended as it should (stop, tool_calls).
func incompleteReason(f chat.FinishReason) string {
	switch f {
	case chat.FinishLength:
		return responses.ReasonMaxOutputTokens
	case chat.FinishContentFilter:
		return responses.ReasonContentFilter
	}
	return ""
}

// usage is the responses usage of a chat usage: the cached (and
// cache-write) prompt tokens are the input's details, the reasoning
// tokens the output's. The counts are taken as they are, and TotalTokens
// is left to the handler, which takes the counts from 0 to its largest
// and sums them (see responses.Usage.Normalized).
func usage(u *chat.Usage) responses.Usage {
	out := responses.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if d := u.PromptTokensDetails; d != nil {
		out.InputTokensDetails = responses.InputTokensDetails{CachedTokens: d.CachedTokens, CacheWriteTokens: d.CacheWriteTokens}
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.OutputTokensDetails.ReasoningTokens = d.ReasoningTokens
	}
	return out
}

// The kinds of the output items of a stream.
const (
	kindNone = iota
	kindReasoning
	kindMessage
	kindCall
)

// cursor turns a chat stream into responses deltas: it numbers the output
// items, a change of kind (reasoning, text, a tool call) beginning the
// next one.
type cursor struct {
	item  int // the open item, -1 before the first
	kind  int // its kind
	call  int // the tool call index of an open function call
	calls int // the tool calls begun: the next one's index is at least this
	usage responses.Usage
}

func newCursor() cursor { return cursor{item: -1} }

// next begins the next item, of kind, and returns its index.
func (c *cursor) next(kind int) int {
	c.item++
	c.kind = kind
	return c.item
}

// open returns the index of the open item if it is of kind, and else
// begins the next one.
func (c *cursor) open(kind int) int {
	if c.kind == kind {
		return c.item
	}
	return c.next(kind)
}

// translate yields the responses deltas of one chat delta d. It returns
// false when yield did, and after yielding the error of a delta that the
// responses format cannot carry.
func (c *cursor) translate(d *chat.Delta, yield func(responses.Delta, error) bool) bool {
	if d.Choice != 0 {
		yield(responses.Delta{}, apierrors.Internal(fmt.Errorf("fromchat: the chat backend sent a delta of choice %d for a request of one", d.Choice)))
		return false
	}
	if d.Reasoning != "" && !yield(responses.Delta{Item: c.open(kindReasoning), Reasoning: d.Reasoning}, nil) {
		return false
	}
	if d.Content != "" && !yield(responses.Delta{Item: c.open(kindMessage), Text: d.Content}, nil) {
		return false
	}
	for _, tc := range d.ToolCalls {
		var rd responses.Delta
		switch {
		case c.kind == kindCall && tc.Index == c.call:
			if tc.Arguments == "" {
				continue
			}
			rd = responses.Delta{Item: c.item, Arguments: tc.Arguments}
		case tc.Index >= c.calls:
			c.call, c.calls = tc.Index, tc.Index+1
			rd = responses.Delta{Item: c.next(kindCall), Call: &responses.FunctionCall{CallID: tc.ID, Name: tc.Name, Arguments: tc.Arguments}}
		default:
			// The responses format streams one item at a time: a call
			// that an item of its own has followed cannot go on.
			yield(responses.Delta{}, apierrors.Internal(fmt.Errorf(
				"fromchat: the chat backend sent a fragment of tool call %d after the output item that followed it", tc.Index)))
			return false
		}
		if !yield(rd, nil) {
			return false
		}
	}
	if reason, u := incompleteReason(d.FinishReason), d.Usage; reason != "" || u != nil {
		rd := responses.Delta{Item: max(c.item, 0), Incomplete: reason}
		if u != nil {
			c.usage = usage(u)
			rd.Usage = &c.usage
		}
		return yield(rd, nil)
	}
	return true
}

// finish ends the stream of a chat backend that ended without an error:
// a reply with no output item yet gets an empty message, as [result]
// gives it.
func (c *cursor) finish(yield func(responses.Delta, error) bool) {
	if c.item < 0 {
		c.next(kindMessage)
		yield(responses.Delta{Item: 0}, nil)
	}
}
