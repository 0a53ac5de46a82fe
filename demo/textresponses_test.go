package demo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/demo"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/responses"
)

var responsesModel = &models.Model{ID: demo.ChatModel, EndpointTypes: []models.EndpointType{models.CompatResponse}}

func responsesParams(t *testing.T, body string, history ...responses.Item) *responses.Params {
	t.Helper()
	var req responses.Request
	require.NoError(t, json.Unmarshal([]byte(body), &req))
	return &responses.Params{Request: &req, Model: responsesModel, History: history}
}

// streamed is a streamed responses reply put back together.
type streamed struct {
	text, name, args string
	items            int
	usage            *responses.Usage
	incomplete       string
	err              error
}

func stream(b *demo.ResponsesBackend, p *responses.Params) streamed {
	var s streamed
	for d, err := range b.Stream(context.Background(), p) {
		if err != nil {
			s.err = err
			break
		}
		if d.Call != nil {
			s.name = d.Call.Name
			s.items++
		} else if d.Text != "" && s.items == 0 {
			s.items++
		}
		s.text += d.Text
		s.args += d.Arguments
		if d.Usage != nil {
			s.usage = d.Usage
		}
		if d.Incomplete != "" {
			s.incomplete = d.Incomplete
		}
	}
	return s
}

func TestResponsesReplyEchoesTheInput(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend().Responses()
	p := responsesParams(t, `{"model":"demo-chat","instructions":"Be brief.","input":[{"role":"user","content":[{"type":"input_text","text":"Look at this."},{"type":"input_image","image_url":"data:image/png;base64,iVBO"}]}]}`)
	res, err := b.Complete(context.Background(), p)
	require.NoError(t, err)
	require.Len(t, res.Output, 1)
	want := `You said: "Look at this.". I see 1 image: an inline image/png image. This is the gatewaykit demo model, counting to twenty: one, two, three, four, five, six, seven, eight, nine, ten, eleven, twelve, thirteen, fourteen, fifteen, sixteen, seventeen, eighteen, nineteen, twenty.`
	require.Equal(t, want, res.Output[0].Text)
	require.Empty(t, res.Incomplete)
	in := demo.CountTokens("Be brief.") + demo.CountTokens("Look at this.") + demo.ImageTokens
	require.Equal(t, responses.Usage{InputTokens: in, OutputTokens: demo.CountTokens(want), TotalTokens: in + demo.CountTokens(want)}, res.Usage)
	require.GreaterOrEqual(t, res.Usage.OutputTokens, 40, "long enough for token caps to show")

	s := stream(demo.NewTextBackend(demo.WithTokensPerChunk(3)).Responses(), p)
	require.NoError(t, s.err)
	require.Equal(t, want, s.text, "the stream says what Complete says")
	require.Equal(t, res.Usage, *s.usage)
}

func TestResponsesReplyIsCutByMaxOutputTokens(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend().Responses()
	p := responsesParams(t, `{"model":"demo-chat","input":"Count.","max_output_tokens":10}`)
	res, err := b.Complete(context.Background(), p)
	require.NoError(t, err)
	require.Equal(t, responses.ReasonMaxOutputTokens, res.Incomplete)
	require.Equal(t, 10, res.Usage.OutputTokens)
	require.Equal(t, 10, demo.CountTokens(res.Output[0].Text))
	s := stream(b, p)
	require.Equal(t, res.Output[0].Text, s.text)
	require.Equal(t, responses.ReasonMaxOutputTokens, s.incomplete)
}

func TestResponsesReplyProvesItSawTheEarlierTurns(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend().Responses()
	history := []responses.Item{
		{Type: responses.ItemMessage, Role: responses.RoleUser, Content: responses.TextContent("I live in Lyon.")},
		{Type: responses.ItemMessage, Role: responses.RoleAssistant, Content: responses.PartsContent(responses.ContentPart{Type: responses.PartOutputText, Text: "Noted."})},
		{Type: responses.ItemMessage, Role: responses.RoleUser, Content: responses.TextContent("I like trains.")},
		{Type: responses.ItemMessage, Role: responses.RoleAssistant, Content: responses.TextContent("Good.")},
	}
	res, err := b.Complete(context.Background(), responsesParams(t, `{"model":"demo-chat","input":"Where do I live?"}`, history...))
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(res.Output[0].Text, `Earlier you said: "I like trains." (2 earlier messages). You said: "Where do I live?".`), res.Output[0].Text)
	want := 0
	for _, s := range []string{"I live in Lyon.", "Noted.", "I like trains.", "Good.", "Where do I live?"} {
		want += demo.CountTokens(s)
	}
	require.Equal(t, want, res.Usage.InputTokens, "the history counts as input")
}

func TestResponsesToolCalls(t *testing.T) {
	t.Parallel()
	const tools = `"tools":[{"type":"web_search"},{"type":"function","name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city","days"]}},{"type":"function","name":"get_time"}]`
	tests := []struct {
		name, body, wantName string
	}{
		{"auto, mentioned", `{"model":"demo-chat","input":"Use get_time please",` + tools + `}`, "get_time"},
		{"auto, not mentioned", `{"model":"demo-chat","input":"Hello",` + tools + `}`, ""},
		{"required: the first function", `{"model":"demo-chat","input":"Hello","tool_choice":"required",` + tools + `}`, "get_weather"},
		{"named", `{"model":"demo-chat","input":"Hello","tool_choice":{"type":"function","name":"get_time"},` + tools + `}`, "get_time"},
		{"none", `{"model":"demo-chat","input":"Use get_time","tool_choice":"none",` + tools + `}`, ""},
		{"after a tool result", `{"model":"demo-chat","input":[{"role":"user","content":"Use get_time"},{"type":"function_call_output","call_id":"c","output":"noon"}],` + tools + `}`, ""},
	}
	b := demo.NewTextBackend(demo.WithTokensPerChunk(2)).Responses()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := responsesParams(t, tc.body)
			res, err := b.Complete(context.Background(), p)
			require.NoError(t, err)
			require.Len(t, res.Output, 1)
			s := stream(b, p)
			require.NoError(t, s.err)
			if tc.wantName == "" {
				require.Nil(t, res.Output[0].Call)
				require.Empty(t, s.name)
				return
			}
			call := res.Output[0].Call
			require.NotNil(t, call)
			require.Equal(t, tc.wantName, call.Name)
			require.Empty(t, call.CallID, "the handler makes the call ids")
			require.True(t, json.Valid([]byte(call.Arguments)), call.Arguments)
			require.Equal(t, tc.wantName, s.name)
			require.Equal(t, call.Arguments, s.args)
			require.Equal(t, res.Usage, *s.usage)
			require.Equal(t, demo.CountTokens(call.Name)+demo.CountTokens(call.Arguments), res.Usage.OutputTokens)
		})
	}
}

func TestResponsesToolResultIsUsed(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend().Responses()
	history := []responses.Item{
		{Type: responses.ItemMessage, Role: responses.RoleUser, Content: responses.TextContent("Weather in Rome? get_weather")},
		{Type: responses.ItemFunctionCall, CallID: "call_1", Name: "get_weather", Arguments: `{"city":"Rome"}`},
	}
	p := responsesParams(t, `{"model":"demo-chat","input":[{"type":"function_call_output","call_id":"call_1","output":[{"type":"input_text","text":"21 C"}]}],"tools":[{"type":"function","name":"get_weather"}]}`, history...)
	res, err := b.Complete(context.Background(), p)
	require.NoError(t, err)
	require.Nil(t, res.Output[0].Call, "no second call after a tool result")
	require.Contains(t, res.Output[0].Text, `The tool returned: "21 C".`)
}

func TestResponsesDirectives(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend().Responses()
	p := responsesParams(t, `{"model":"demo-chat","input":"Now [demo:fail]"}`)
	_, err := b.Complete(context.Background(), p)
	var apiErr *apierrors.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 502, apiErr.Status)
	s := stream(b, p)
	require.NotEmpty(t, s.text, "a stream fails after its first chunk")
	require.ErrorAs(t, s.err, &apiErr)

	p = responsesParams(t, `{"model":"demo-chat","input":"Rude [demo:content_filter]"}`)
	res, err := b.Complete(context.Background(), p)
	require.NoError(t, err)
	require.Empty(t, res.Output)
	require.Equal(t, responses.ReasonContentFilter, res.Incomplete)
	s = stream(b, p)
	require.Zero(t, s.items)
	require.Equal(t, responses.ReasonContentFilter, s.incomplete)
}

func TestResponsesCompaction(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend().Responses()
	var req responses.CompactRequest
	require.NoError(t, json.Unmarshal([]byte(`{"model":"demo-chat","input":"Second."}`), &req))
	cp := &responses.CompactParams{Request: &req, Model: responsesModel, History: []responses.Item{
		{Type: responses.ItemMessage, Role: responses.RoleUser, Content: responses.TextContent("First.")},
		{Type: responses.ItemMessage, Role: responses.RoleAssistant, Content: responses.TextContent("Answer.")},
	}}
	res, err := b.Compact(context.Background(), cp)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(res.EncryptedContent, "demo-compaction:"), res.EncryptedContent)
	require.Equal(t, 6, res.Usage.InputTokens)
	require.Equal(t, 4, res.Usage.OutputTokens)

	p := responsesParams(t, fmt.Sprintf(`{"model":"demo-chat","input":[{"type":"compaction","encrypted_content":%q},{"role":"user","content":"Third."}]}`, res.EncryptedContent))
	out, err := b.Complete(context.Background(), p)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out.Output[0].Text, `Earlier you said: "Second." (2 earlier messages). You said: "Third.".`), out.Output[0].Text)
}

func TestResponsesStreamStopsWithTheContext(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend(demo.WithChunkDelay(time.Hour)).Responses()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var got error
	for _, err := range b.Stream(ctx, responsesParams(t, `{"model":"demo-chat","input":"Hi"}`)) {
		got = err
	}
	require.True(t, errors.Is(got, context.Canceled), "%v", got)
	_, err := b.Complete(ctx, responsesParams(t, `{"model":"demo-chat","input":"Hi"}`))
	require.ErrorIs(t, err, context.Canceled)
}

func ExampleTextBackend_Responses() {
	var req responses.Request
	_ = json.Unmarshal([]byte(`{"model":"demo-chat","max_output_tokens":12,"input":"Count!"}`), &req)
	history := []responses.Item{{Type: responses.ItemMessage, Role: responses.RoleUser, Content: responses.TextContent("Hello.")}}
	res, _ := demo.NewTextBackend().Responses().Complete(context.Background(), &responses.Params{Request: &req, History: history})
	fmt.Printf("%q %s %+v\n", res.Output[0].Text, res.Incomplete, res.Usage)
	// Output:
	// "Earlier you said: \"Hello.\" (1 earlier message" max_output_tokens {InputTokens:4 InputTokensDetails:{CachedTokens:0 CacheWriteTokens:0} OutputTokens:12 OutputTokensDetails:{ReasoningTokens:0} TotalTokens:16}
}

func TestResponsesReasoner(t *testing.T) {
	t.Parallel()
	reasoner := &models.Model{ID: demo.ReasonerModel, EndpointTypes: []models.EndpointType{models.CompatResponse}, Reasoning: true}
	b := demo.NewTextBackend(demo.WithTokensPerChunk(4)).Responses()
	params := func(body string) *responses.Params {
		p := responsesParams(t, body)
		p.Model = reasoner
		return p
	}

	p := params(`{"model":"demo-reasoner","input":"Think."}`)
	res, err := b.Complete(context.Background(), p)
	require.NoError(t, err)
	require.Len(t, res.Output, 2)
	require.Equal(t, "The prompt has 2 tokens. I will repeat the last message and count to twenty.", res.Output[0].Reasoning)
	require.True(t, strings.HasPrefix(res.Output[1].Text, `You said: "Think.".`))
	reasoned := demo.CountTokens(res.Output[0].Reasoning)
	require.Equal(t, reasoned, res.Usage.OutputTokensDetails.ReasoningTokens)
	require.Equal(t, reasoned+demo.CountTokens(res.Output[1].Text), res.Usage.OutputTokens)
	var reasoning, text string
	items := map[int]bool{}
	for d, err := range b.Stream(context.Background(), p) {
		require.NoError(t, err)
		reasoning += d.Reasoning
		text += d.Text
		if d.Reasoning != "" || d.Text != "" {
			items[d.Item] = true
			require.Equal(t, d.Reasoning != "", d.Item == 0, "reasoning is item 0, the message item 1")
		}
	}
	require.Equal(t, res.Output[0].Reasoning, reasoning)
	require.Equal(t, res.Output[1].Text, text)
	require.Len(t, items, 2)

	// The cap cuts the reasoning first; nothing is left for a message.
	res, err = b.Complete(context.Background(), params(`{"model":"demo-reasoner","input":"Think.","max_output_tokens":5}`))
	require.NoError(t, err)
	require.Len(t, res.Output, 1)
	require.Equal(t, "The prompt has 2 tokens", res.Output[0].Reasoning)
	require.Equal(t, responses.ReasonMaxOutputTokens, res.Incomplete)

	// Before a tool call, the reasoning names the tool.
	res, err = b.Complete(context.Background(), params(`{"model":"demo-reasoner","input":"Weather?","tool_choice":"required","tools":[{"type":"function","name":"get_weather"}]}`))
	require.NoError(t, err)
	require.Len(t, res.Output, 2)
	require.Contains(t, res.Output[0].Reasoning, "The user needs the tool get_weather")
	require.Equal(t, "get_weather", res.Output[1].Call.Name)
}
