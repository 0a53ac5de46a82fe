package demo_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/completions"
	"github.com/gatewaykit/gatewaykit/demo"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/models"
)

func TestCountTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text string
		want int
	}{
		{"", 0},
		{"Hello", 1},
		{"Hello, world!", 4},
		{"  3.14 apples", 4},
		{"trailing space ", 3},
		{"get_weather", 3},
		{"é 中文 😀", 3},
		{"\n\n", 1},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, demo.CountTokens(tc.text), "%q", tc.text)
	}
}

var (
	chatModel     = &models.Model{ID: demo.ChatModel, EndpointTypes: []models.EndpointType{models.Compat}}
	reasonerModel = &models.Model{ID: demo.ReasonerModel, EndpointTypes: []models.EndpointType{models.Compat}, Reasoning: true}
)

func chatParams(t *testing.T, body string, m *models.Model) *chat.Params {
	t.Helper()
	var req chat.Request
	require.NoError(t, json.Unmarshal([]byte(body), &req))
	return &chat.Params{Request: &req, Model: m}
}

// collected is a streamed chat reply put back together.
type collected struct {
	content, reasoning, name, args []string
	finish                         []chat.FinishReason
	usage                          *chat.Usage
	deltas                         int
}

func collect(t *testing.T, b *demo.ChatBackend, p *chat.Params) collected {
	t.Helper()
	n := p.Request.Choices()
	c := collected{content: make([]string, n), reasoning: make([]string, n), name: make([]string, n), args: make([]string, n), finish: make([]chat.FinishReason, n)}
	for d, err := range b.Stream(t.Context(), p) {
		require.NoError(t, err)
		if d.Usage != nil {
			c.usage = d.Usage
			continue
		}
		c.deltas++
		require.Empty(t, c.finish[d.Choice], "nothing after the finish reason")
		c.content[d.Choice] += d.Content
		c.reasoning[d.Choice] += d.Reasoning
		for _, tc := range d.ToolCalls {
			require.Zero(t, tc.Index)
			c.name[d.Choice] += tc.Name
			c.args[d.Choice] += tc.Arguments
		}
		c.finish[d.Choice] = d.FinishReason
	}
	return c
}

// TestStreamMatchesComplete checks that the streamed reply, put back
// together, is the reply of Complete, for requests of every kind.
func TestStreamMatchesComplete(t *testing.T) {
	t.Parallel()
	weather := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]`
	bodies := []string{
		`{"model":"m","messages":[{"role":"user","content":"Hello"}]}`,
		`{"model":"m","n":3,"max_tokens":17,"stop":["nine"],"messages":[{"role":"user","content":"Hello"}]}`,
		`{"model":"m","stop":"two","messages":[{"role":"user","content":[{"type":"text","text":"Look"},{"type":"image_url","image_url":{"url":"https://x.test/a.png"}}]}]}`,
		`{"model":"m","tool_choice":"required",` + weather + `,"messages":[{"role":"user","content":"Rain?"}]}`,
		`{"model":"m",` + weather + `,"messages":[{"role":"user","content":"Use get_weather please"}]}`,
		`{"model":"m","response_format":{"type":"json_object"},"messages":[{"role":"user","content":"JSON"}]}`,
		`{"model":"m","n":2,"messages":[{"role":"user","content":"[demo:content_filter]"}]}`,
		`{"model":"m","max_completion_tokens":3,"messages":[{"role":"user","content":"Hi"}]}`,
	}
	for _, k := range []int{1, 3} {
		b := demo.NewTextBackend(demo.WithTokensPerChunk(k)).Chat()
		for _, body := range bodies {
			for _, m := range []*models.Model{chatModel, reasonerModel} {
				p := chatParams(t, body, m)
				res, err := b.Complete(t.Context(), p)
				require.NoError(t, err)
				got := collect(t, b, p)
				require.Equal(t, res.Usage, *got.usage, body)
				require.Len(t, res.Choices, p.Request.Choices())
				for i, o := range res.Choices {
					require.Equal(t, o.Content, got.content[i], body)
					require.Equal(t, o.Reasoning, got.reasoning[i], body)
					require.Equal(t, o.FinishReason, got.finish[i], body)
					if len(o.ToolCalls) > 0 {
						require.Equal(t, o.ToolCalls[0].Function.Name, got.name[i])
						require.Equal(t, o.ToolCalls[0].Function.Arguments, got.args[i])
						require.True(t, json.Valid([]byte(got.args[i])))
					}
				}
				require.Equal(t, res.Usage.PromptTokens+res.Usage.CompletionTokens, res.Usage.TotalTokens)
			}
		}
	}
}

func TestChatReplies(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend().Chat()
	complete := func(body string, m *models.Model) *chat.Result {
		res, err := b.Complete(t.Context(), chatParams(t, body, m))
		require.NoError(t, err)
		return res
	}

	res := complete(`{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":"Hi there"},{"role":"assistant","content":"A"}]}`, chatModel)
	require.True(t, strings.HasPrefix(res.Choices[0].Content, `You said: "Hi there".`), "echoes the last user message")
	require.GreaterOrEqual(t, demo.CountTokens(res.Choices[0].Content), 40, "a few dozen tokens at least")
	require.Equal(t, demo.CountTokens(res.Choices[0].Content), res.Usage.CompletionTokens)
	require.Equal(t, 4, res.Usage.PromptTokens, "S + Hi there + A")

	res = complete(`{"model":"m","n":3,"messages":[{"role":"user","content":"Hi"}]}`, chatModel)
	require.Len(t, res.Choices, 3)
	require.NotEqual(t, res.Choices[0].Content, res.Choices[1].Content)
	require.NotEqual(t, res.Choices[1].Content, res.Choices[2].Content)

	res = complete(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"Hi"}]}`, chatModel)
	require.Equal(t, chat.FinishLength, res.Choices[0].FinishReason)
	require.Equal(t, 5, demo.CountTokens(res.Choices[0].Content))

	res = complete(`{"model":"m","stop":["three"],"messages":[{"role":"user","content":"Hi"}]}`, chatModel)
	require.Equal(t, chat.FinishStop, res.Choices[0].FinishReason)
	require.True(t, strings.HasSuffix(res.Choices[0].Content, "one, two, "), res.Choices[0].Content)

	res = complete(`{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x.test/cat.png"}},{"type":"image_url","image_url":{"url":"data:image/webp;base64,AAAA"}}]}]}`, chatModel)
	require.Contains(t, res.Choices[0].Content, "I see 2 images: https://x.test/cat.png and an inline image/webp image.")
	require.Equal(t, 2*demo.ImageTokens, res.Usage.PromptTokens)

	res = complete(`{"model":"m","messages":[{"role":"user","content":"Why?"}]}`, reasonerModel)
	require.NotEmpty(t, res.Choices[0].Reasoning)
	require.Equal(t, demo.CountTokens(res.Choices[0].Reasoning), res.Usage.CompletionTokensDetails.ReasoningTokens)
	require.Equal(t, demo.CountTokens(res.Choices[0].Reasoning)+demo.CountTokens(res.Choices[0].Content), res.Usage.CompletionTokens)

	res = complete(`{"model":"m","tool_choice":"none","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"call f"}]}`, chatModel)
	require.Empty(t, res.Choices[0].ToolCalls)
}

func TestToolArgumentsHoldTheRequiredProperties(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend().Chat()
	tests := []struct {
		schema string
		want   string
	}{
		{``, `{}`},
		{`{}`, `{}`},
		{`{"type":"object"}`, `{}`},
		{`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"required":["b"]}`, `{"b":"Go"}`},
		{`{"type":"object","properties":{"n":{"type":"integer","minimum":2.5},"x":{"type":"number","minimum":-1.5},"ok":{"type":"boolean"},"z":{"type":"null"}},"required":["n","x","ok","z"]}`,
			`{"n":3,"x":-1.5,"ok":true,"z":null}`},
		{`{"type":"object","properties":{"e":{"enum":["red","green"]},"c":{"const":{"k":[1]}},"o":{"anyOf":[{"type":"integer"},{"type":"string"}]}},"required":["e","c","o"]}`,
			`{"e":"red","c":{"k":[1]},"o":1}`},
		{`{"type":"object","properties":{"list":{"type":"array","minItems":2,"items":{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]}}},"required":["list","missing"]}`,
			`{"list":[{"id":1},{"id":1}],"missing":"Go"}`},
		{`{"type":"object","properties":{"t":{"type":["null","string"]},"r":{"$ref":"#/defs/x"}},"required":["t","r"]}`, `{"t":"Go","r":"Go"}`},
	}
	for _, tc := range tests {
		body := `{"model":"m","tool_choice":"required","tools":[{"type":"function","function":{"name":"f"` +
			map[bool]string{true: "", false: `,"parameters":` + tc.schema}[tc.schema == ""] + `}}],"messages":[{"role":"user","content":"Go"}]}`
		res, err := b.Complete(t.Context(), chatParams(t, body, chatModel))
		require.NoError(t, err)
		o := res.Choices[0]
		require.Equal(t, chat.FinishToolCalls, o.FinishReason)
		require.Empty(t, o.Content)
		require.JSONEq(t, tc.want, o.ToolCalls[0].Function.Arguments, tc.schema)
	}
}

func TestDirectives(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend().Chat()
	p := chatParams(t, `{"model":"m","messages":[{"role":"user","content":"[demo:fail]"}]}`, chatModel)
	_, err := b.Complete(t.Context(), p)
	var apiErr *apierrors.Error
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, 502, apiErr.Status)

	n := 0
	for d, err := range b.Stream(t.Context(), p) {
		if err != nil {
			require.ErrorAs(t, err, &apiErr)
			break
		}
		require.NotEmpty(t, d.Content)
		n++
	}
	require.Equal(t, 1, n, "the stream fails after its first chunk")
}

func TestStreamStopsWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend(demo.WithChunkDelay(time.Hour)).Chat()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	for _, err := range b.Stream(ctx, chatParams(t, `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`, chatModel)) {
		require.ErrorIs(t, err, context.Canceled)
	}
	_, err := b.Complete(ctx, chatParams(t, `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`, chatModel))
	require.ErrorIs(t, err, context.Canceled)
}

func TestStreamStopsWhenTheConsumerStops(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend().Chat()
	n := 0
	for range b.Stream(t.Context(), chatParams(t, `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`, chatModel)) {
		n++
		if n == 2 {
			break
		}
	}
	require.Equal(t, 2, n)
}

func TestWithTokensPerChunk(t *testing.T) {
	t.Parallel()
	p := chatParams(t, `{"model":"m","max_tokens":30,"messages":[{"role":"user","content":"Hi"}]}`, chatModel)
	for k, want := range map[int]int{1: 30, 4: 8, 30: 1, 100: 1} {
		got := collect(t, demo.NewTextBackend(demo.WithTokensPerChunk(k)).Chat(), p)
		require.Equal(t, want, got.deltas, "k=%d", k)
	}
	require.Panics(t, func() { demo.WithTokensPerChunk(0) })
	require.Panics(t, func() { demo.WithChunkDelay(-1) })
}

func TestCompletions(t *testing.T) {
	t.Parallel()
	b := demo.NewTextBackend(demo.WithTokensPerChunk(2)).Completions()
	var req completions.Request
	require.NoError(t, json.Unmarshal([]byte(`{"model":"m","prompt":["Alpha","Beta"],"n":2,"max_tokens":11,"stop":"twenty"}`), &req))
	p := &completions.Params{Request: &req, Model: chatModel}
	res, err := b.Complete(t.Context(), p)
	require.NoError(t, err)
	require.Len(t, res.Choices, 4)
	require.True(t, strings.HasPrefix(res.Choices[0].Text, `Choice 1 of 2. You said: "Alpha"`))
	require.True(t, strings.HasPrefix(res.Choices[3].Text, `Choice 2 of 2. You said: "Beta"`))
	require.Equal(t, 2, res.Usage.PromptTokens)
	require.Equal(t, 44, res.Usage.CompletionTokens)

	texts := make([]string, 4)
	finish := make([]chat.FinishReason, 4)
	var usage *chat.Usage
	for d, err := range b.Stream(t.Context(), p) {
		require.NoError(t, err)
		if d.Usage != nil {
			usage = d.Usage
			continue
		}
		texts[d.Choice] += d.Text
		finish[d.Choice] = d.FinishReason
	}
	require.Equal(t, res.Usage, *usage)
	for i, o := range res.Choices {
		require.Equal(t, o.Text, texts[i])
		require.Equal(t, chat.FinishLength, finish[i])
	}
}

// TestStreamSaysWhenItWaits checks the demo's calls of Params.Flush: one
// before each pause of WithChunkDelay, after the chunks yielded before
// it; without a delay, one before the first chunk (all are at hand).
func TestStreamSaysWhenItWaits(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		opts  []demo.TextOption
		calls func(chunks int) []int // the chunks yielded before each call
	}{
		{"without a delay", nil, func(int) []int { return []int{0} }},
		{"with a delay", []demo.TextOption{demo.WithChunkDelay(time.Nanosecond)}, func(n int) []int {
			calls := make([]int, n)
			for i := range calls {
				calls[i] = i
			}
			return calls
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := chatParams(t, `{"model":"m","messages":[{"role":"user","content":"Hi there"}]}`, chatModel)
			yielded := 0
			var calls []int
			p.SetFlush(func() { calls = append(calls, yielded) })
			chunks := 0
			for d, err := range demo.NewTextBackend(tc.opts...).Chat().Stream(t.Context(), p) {
				require.NoError(t, err)
				yielded++
				if d.Usage == nil {
					chunks++
				}
			}
			require.Equal(t, tc.calls(chunks), calls)
		})
	}
}
