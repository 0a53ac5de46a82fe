package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/gatewaykit/gatewaykit/chat"
	"github.com/gatewaykit/gatewaykit/endpoint"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/ids"
)

// MaxCandidates is the largest candidateCount a request may ask for, as
// in Google's API.
const MaxCandidates = 8

// MaxStopSequences is the largest number of stopSequences a request may
// send, as in Google's API.
const MaxStopSequences = 5

// badf is a 400 INVALID_ARGUMENT at the field param.
func badf(param, format string, args ...any) *apierrors.Error {
	return apierrors.InvalidRequestf(param, format, args...)
}

// ToChat translates a Gemini-style request for model into the chat
// completions request that a chat backend is asked, after checking it:
// every way it can be wrong is a 400 (INVALID_ARGUMENT on the wire) whose
// param is the field's path ("contents[1].parts[0].inlineData.mimeType").
//
// The translation: systemInstruction becomes a system message; each
// content a message (user, or assistant for role model), its text parts
// text, its inlineData images (and fileData with an http(s) image URI)
// image_url parts, a model's functionCall parts tool_calls (with the
// call's id, or "call_" and its position when it has none) and a user's
// functionResponse parts tool messages answering the call with the same
// id, or else the earliest unanswered call of that name; a model's
// thought parts are left out. generationConfig: maxOutputTokens is
// max_completion_tokens, temperature, topP, stopSequences and
// candidateCount (n) carry over, topK, seed, presencePenalty and
// frequencyPenalty go as top_k, seed, presence_penalty and
// frequency_penalty, responseMimeType application/json is
// response_format json_object, or json_schema with responseJsonSchema
// (or responseSchema, its type names lower-cased). tools'
// functionDeclarations are function tools (parametersJsonSchema, else
// parameters with lower-cased type names); toolConfig's mode AUTO and
// VALIDATED are tool_choice auto, NONE none, ANY required (or the one
// function of allowedFunctionNames; several narrow the tools to them).
func ToChat(model string, req *Request) (*chat.Request, error) {
	if err := validate(req); err != nil {
		return nil, err
	}
	out := &chat.Request{Model: model}
	if si := req.SystemInstruction; si != nil {
		var b strings.Builder
		for _, p := range si.Parts {
			if p.Text == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(p.Text)
		}
		out.Messages = append(out.Messages, chat.Message{Role: chat.RoleSystem, Content: chat.TextContent(b.String())})
	}
	var calls pendingCalls
	for i := range req.Contents {
		c := &req.Contents[i]
		if c.Role == RoleModel {
			out.Messages = append(out.Messages, modelMessage(c, i, &calls))
			continue
		}
		msgs, err := userMessages(c, i, &calls)
		if err != nil {
			return nil, err
		}
		out.Messages = append(out.Messages, msgs...)
	}
	if err := applyConfig(out, req.GenerationConfig); err != nil {
		return nil, err
	}
	applyTools(out, req)
	return out, nil
}

// pendingCalls are the function calls of the conversation so far, for
// the function responses that name no id.
type pendingCalls struct {
	calls []pendingCall
}

type pendingCall struct {
	id, name string
	answered bool
}

// answer returns the id of the call that a response named name answers:
// id if given, else the earliest unanswered call of that name, else a
// new id.
func (pc *pendingCalls) answer(id, name string, content, part int) string {
	if id != "" {
		for i := range pc.calls {
			if pc.calls[i].id == id {
				pc.calls[i].answered = true
			}
		}
		return id
	}
	for i := range pc.calls {
		c := &pc.calls[i]
		if !c.answered && c.name == name {
			c.answered = true
			return c.id
		}
	}
	return callID(content, part)
}

// callID is the id of the call in part of content that has none.
func callID(content, part int) string {
	return "call_" + strconv.Itoa(content) + "_" + strconv.Itoa(part)
}

// modelMessage translates a model turn into an assistant message.
func modelMessage(c *Content, ci int, calls *pendingCalls) chat.Message {
	m := chat.Message{Role: chat.RoleAssistant}
	var text strings.Builder
	for pi := range c.Parts {
		p := &c.Parts[pi]
		switch {
		case p.FunctionCall != nil:
			fc := p.FunctionCall
			id := fc.ID
			if id == "" {
				id = callID(ci, pi)
			}
			calls.calls = append(calls.calls, pendingCall{id: id, name: fc.Name})
			m.ToolCalls = append(m.ToolCalls, chat.ToolCall{ID: id, Type: "function",
				Function: chat.FunctionCall{Name: fc.Name, Arguments: argsString(fc.Args)}})
		case p.Thought:
			// A model's thoughts are not sent back to a chat backend.
		default:
			text.WriteString(p.Text)
		}
	}
	if text.Len() > 0 || len(m.ToolCalls) == 0 {
		m.Content = chat.TextContent(text.String())
	}
	return m
}

// argsString is the arguments string of a function call's args.
func argsString(args json.RawMessage) string {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		return "{}"
	}
	var b bytes.Buffer
	if json.Compact(&b, args) != nil {
		return string(args)
	}
	return b.String()
}

// userMessages translates a user turn: its function responses become
// tool messages, first, and its other parts one user message.
func userMessages(c *Content, ci int, calls *pendingCalls) ([]chat.Message, error) {
	var msgs []chat.Message
	var parts []chat.ContentPart
	for pi := range c.Parts {
		p := &c.Parts[pi]
		path := fmt.Sprintf("contents[%d].parts[%d]", ci, pi)
		switch {
		case p.FunctionResponse != nil:
			fr := p.FunctionResponse
			msgs = append(msgs, chat.Message{Role: chat.RoleTool,
				ToolCallID: calls.answer(fr.ID, fr.Name, ci, pi),
				Content:    chat.TextContent(argsString(fr.Response))})
		case p.InlineData != nil:
			parts = append(parts, chat.ContentPart{Type: chat.PartImageURL,
				ImageURL: &chat.ImageURL{URL: "data:" + p.InlineData.MIMEType + ";base64," + p.InlineData.Data}})
		case p.FileData != nil:
			parts = append(parts, chat.ContentPart{Type: chat.PartImageURL, ImageURL: &chat.ImageURL{URL: p.FileData.FileURI}})
		case p.FunctionCall != nil:
			return nil, badf(path+".functionCall", "%s.functionCall: only a model turn may call functions", path)
		default:
			parts = append(parts, chat.ContentPart{Type: chat.PartText, Text: p.Text})
		}
	}
	switch {
	case len(parts) == 0:
	case len(parts) == 1 && parts[0].Type == chat.PartText:
		msgs = append(msgs, chat.Message{Role: chat.RoleUser, Content: chat.TextContent(parts[0].Text)})
	default:
		msgs = append(msgs, chat.Message{Role: chat.RoleUser, Content: chat.PartsContent(parts...)})
	}
	return msgs, nil
}

// applyConfig sets what generationConfig asks for on out.
func applyConfig(out *chat.Request, gc *GenerationConfig) error {
	if gc == nil {
		return nil
	}
	out.MaxCompletionTokens = gc.MaxOutputTokens
	out.Temperature = gc.Temperature
	out.TopP = gc.TopP
	out.N = gc.CandidateCount
	if len(gc.StopSequences) > 0 {
		out.Stop = chat.Stop(gc.StopSequences)
	}
	extra := func(name string, v any) {
		if out.Extra == nil {
			out.Extra = make(map[string]json.RawMessage)
		}
		b, _ := json.Marshal(v)
		out.Extra[name] = b
	}
	if gc.TopK != nil {
		extra("top_k", *gc.TopK)
	}
	if gc.Seed != nil {
		extra("seed", *gc.Seed)
	}
	if gc.PresencePenalty != nil {
		extra("presence_penalty", *gc.PresencePenalty)
	}
	if gc.FrequencyPenalty != nil {
		extra("frequency_penalty", *gc.FrequencyPenalty)
	}
	if strings.EqualFold(gc.ResponseMIMEType, "application/json") {
		schema := gc.ResponseJSONSchema
		if len(schema) == 0 && len(gc.ResponseSchema) > 0 {
			schema = lowerSchemaTypes(gc.ResponseSchema)
		}
		if len(schema) > 0 {
			out.ResponseFormat = &chat.ResponseFormat{Type: chat.FormatJSONSchema, JSONSchema: &chat.JSONSchema{Name: "response", Schema: schema}}
		} else {
			out.ResponseFormat = &chat.ResponseFormat{Type: chat.FormatJSONObject}
		}
	}
	return nil
}

// applyTools sets the tools and the tool choice of req on out.
func applyTools(out *chat.Request, req *Request) {
	var allowed map[string]bool
	mode := ""
	if tc := req.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil {
		fc := tc.FunctionCallingConfig
		mode = strings.ToUpper(fc.Mode)
		if mode == ModeAny && len(fc.AllowedFunctionNames) > 1 {
			allowed = make(map[string]bool)
			for _, n := range fc.AllowedFunctionNames {
				allowed[n] = true
			}
		}
		switch mode {
		case ModeAny:
			if len(fc.AllowedFunctionNames) == 1 {
				out.ToolChoice = &chat.ToolChoice{Function: fc.AllowedFunctionNames[0]}
			} else {
				out.ToolChoice = &chat.ToolChoice{Mode: chat.ToolChoiceRequired}
			}
		case ModeNone:
			out.ToolChoice = &chat.ToolChoice{Mode: chat.ToolChoiceNone}
		case ModeAuto, ModeValidated:
			out.ToolChoice = &chat.ToolChoice{Mode: chat.ToolChoiceAuto}
		}
	}
	for _, t := range req.Tools {
		for _, fd := range t.FunctionDeclarations {
			if allowed != nil && !allowed[fd.Name] {
				continue
			}
			params := fd.ParametersJSONSchema
			if len(params) == 0 && len(fd.Parameters) > 0 {
				params = lowerSchemaTypes(fd.Parameters)
			}
			out.Tools = append(out.Tools, chat.Tool{Type: "function",
				Function: &chat.FunctionDefinition{Name: fd.Name, Description: fd.Description, Parameters: params}})
		}
	}
	if len(out.Tools) == 0 && out.ToolChoice != nil && out.ToolChoice.Mode != chat.ToolChoiceNone {
		// A tool choice without tools is refused by chat backends; with
		// no functions there is nothing to choose.
		out.ToolChoice = nil
	}
}

// lowerSchemaTypes returns schema, an OpenAPI schema object in Google's
// form (type names such as "OBJECT", "STRING"), with every "type" member
// lower-cased as JSON Schema spells them, and Google's propertyOrdering
// left out. A schema that is not valid JSON is returned as it is.
func lowerSchemaTypes(schema json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(schema, &v) != nil {
		return schema
	}
	v = lowerTypes(v)
	b, err := json.Marshal(v)
	if err != nil {
		return schema
	}
	return b
}

func lowerTypes(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			switch {
			case k == "type":
				switch s := x.(type) {
				case string:
					t[k] = strings.ToLower(s)
				case []any:
					for i, e := range s {
						if es, ok := e.(string); ok {
							s[i] = strings.ToLower(es)
						}
					}
				}
			case k == "propertyOrdering":
				delete(t, k)
			case k == "properties" || k == "$defs" || k == "definitions":
				if m, ok := x.(map[string]any); ok {
					for pk, pv := range m {
						m[pk] = lowerTypes(pv)
					}
				}
			default:
				t[k] = lowerTypes(x)
			}
		}
	case []any:
		for i := range t {
			t[i] = lowerTypes(t[i])
		}
	}
	return v
}

// validate checks what ToChat cannot translate, or what Google's API
// would refuse.
func validate(req *Request) error {
	if len(req.Contents) == 0 {
		return badf("contents", "contents is not specified: a request needs at least one content")
	}
	if si := req.SystemInstruction; si != nil {
		for pi, p := range si.Parts {
			if p.InlineData != nil || p.FileData != nil || p.FunctionCall != nil || p.FunctionResponse != nil {
				return badf(fmt.Sprintf("systemInstruction.parts[%d]", pi), "systemInstruction.parts[%d]: a system instruction holds text parts only", pi)
			}
		}
	}
	for ci := range req.Contents {
		c := &req.Contents[ci]
		switch c.Role {
		case "", RoleUser, RoleModel:
		case "function", "tool":
			c.Role = RoleUser // older clients send function responses so
		default:
			return badf(fmt.Sprintf("contents[%d].role", ci), "contents[%d].role must be user or model, got %s", ci, apierrors.Quote(c.Role))
		}
		if len(c.Parts) == 0 {
			return badf(fmt.Sprintf("contents[%d].parts", ci), "contents[%d].parts must not be empty", ci)
		}
		for pi := range c.Parts {
			if err := validPart(&c.Parts[pi], fmt.Sprintf("contents[%d].parts[%d]", ci, pi)); err != nil {
				return err
			}
		}
	}
	if gc := req.GenerationConfig; gc != nil {
		if err := validConfig(gc); err != nil {
			return err
		}
	}
	names := map[string]bool{}
	for ti, t := range req.Tools {
		for k := range t.Other {
			return badf(fmt.Sprintf("tools[%d].%s", ti, k), "tools[%d].%s is not supported: this model can only call declared functions (functionDeclarations)", ti, k)
		}
		for fi, fd := range t.FunctionDeclarations {
			path := fmt.Sprintf("tools[%d].functionDeclarations[%d]", ti, fi)
			if fd.Name == "" {
				return badf(path+".name", "%s.name is required", path)
			}
			if names[fd.Name] {
				return badf(path+".name", "%s.name: function %s is declared twice", path, apierrors.Quote(fd.Name))
			}
			names[fd.Name] = true
			if !isObjectOrEmpty(fd.Parameters) {
				return badf(path+".parameters", "%s.parameters must be a schema object", path)
			}
			if !isObjectOrEmpty(fd.ParametersJSONSchema) {
				return badf(path+".parametersJsonSchema", "%s.parametersJsonSchema must be a schema object", path)
			}
		}
	}
	if tc := req.ToolConfig; tc != nil && tc.FunctionCallingConfig != nil {
		fc := tc.FunctionCallingConfig
		switch strings.ToUpper(fc.Mode) {
		case "", "MODE_UNSPECIFIED", ModeAuto, ModeAny, ModeNone, ModeValidated:
		default:
			return badf("toolConfig.functionCallingConfig.mode", "toolConfig.functionCallingConfig.mode must be AUTO, ANY, NONE or VALIDATED, got %s", apierrors.Quote(fc.Mode))
		}
		for i, n := range fc.AllowedFunctionNames {
			if !names[n] {
				return badf(fmt.Sprintf("toolConfig.functionCallingConfig.allowedFunctionNames[%d]", i),
					"toolConfig.functionCallingConfig.allowedFunctionNames[%d]: no function %s is declared", i, apierrors.Quote(n))
			}
		}
		if len(fc.AllowedFunctionNames) > 0 && strings.ToUpper(fc.Mode) != ModeAny {
			return badf("toolConfig.functionCallingConfig.allowedFunctionNames", "toolConfig.functionCallingConfig.allowedFunctionNames needs mode ANY")
		}
	}
	return nil
}

// validPart checks one part of a content.
func validPart(p *Part, path string) error {
	n := 0
	if p.InlineData != nil {
		n++
		b := p.InlineData
		if !strings.HasPrefix(b.MIMEType, "image/") {
			return badf(path+".inlineData.mimeType", "%s.inlineData.mimeType must be an image type (image/png, image/jpeg, …), got %s", path, apierrors.Quote(b.MIMEType))
		}
		if b.Data == "" || strings.ContainsAny(b.Data, " ,;\n") {
			return badf(path+".inlineData.data", "%s.inlineData.data must be base64 data", path)
		}
	}
	if p.FileData != nil {
		n++
		f := p.FileData
		if !strings.HasPrefix(f.FileURI, "https://") && !strings.HasPrefix(f.FileURI, "http://") {
			return badf(path+".fileData.fileUri", "%s.fileData.fileUri must be an http(s) URL of an image", path)
		}
		if f.MIMEType != "" && !strings.HasPrefix(f.MIMEType, "image/") {
			return badf(path+".fileData.mimeType", "%s.fileData.mimeType must be an image type, got %s", path, apierrors.Quote(f.MIMEType))
		}
	}
	if fc := p.FunctionCall; fc != nil {
		n++
		if fc.Name == "" {
			return badf(path+".functionCall.name", "%s.functionCall.name is required", path)
		}
		if !isObjectOrEmpty(fc.Args) {
			return badf(path+".functionCall.args", "%s.functionCall.args must be an object", path)
		}
	}
	if fr := p.FunctionResponse; fr != nil {
		n++
		if fr.Name == "" {
			return badf(path+".functionResponse.name", "%s.functionResponse.name is required", path)
		}
		if !isObjectOrEmpty(fr.Response) {
			return badf(path+".functionResponse.response", "%s.functionResponse.response must be an object", path)
		}
	}
	if n > 1 || (n == 1 && p.Text != "") {
		return badf(path, "%s must hold exactly one of text, inlineData, fileData, functionCall and functionResponse", path)
	}
	return nil
}

// isObjectOrEmpty reports whether raw is absent, null or a JSON object.
func isObjectOrEmpty(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null" || raw[0] == '{'
}

// validConfig checks a generationConfig.
func validConfig(gc *GenerationConfig) error {
	const p = "generationConfig."
	switch {
	case gc.MaxOutputTokens != nil && *gc.MaxOutputTokens < 1:
		return badf(p+"maxOutputTokens", "generationConfig.maxOutputTokens must be at least 1, got %d", *gc.MaxOutputTokens)
	case gc.MaxOutputTokens != nil && *gc.MaxOutputTokens > endpoint.MaxOutputTokens:
		return badf(p+"maxOutputTokens", "generationConfig.maxOutputTokens must be at most %d, got %d", endpoint.MaxOutputTokens, *gc.MaxOutputTokens)
	case gc.Temperature != nil && (*gc.Temperature < 0 || *gc.Temperature > 2):
		return badf(p+"temperature", "generationConfig.temperature must be in [0, 2], got %v", *gc.Temperature)
	case gc.TopP != nil && (*gc.TopP < 0 || *gc.TopP > 1):
		return badf(p+"topP", "generationConfig.topP must be in [0, 1], got %v", *gc.TopP)
	case gc.TopK != nil && *gc.TopK < 1:
		return badf(p+"topK", "generationConfig.topK must be at least 1, got %d", *gc.TopK)
	case gc.CandidateCount != nil && (*gc.CandidateCount < 1 || *gc.CandidateCount > MaxCandidates):
		return badf(p+"candidateCount", "generationConfig.candidateCount must be 1 to %d, got %d", MaxCandidates, *gc.CandidateCount)
	case len(gc.StopSequences) > MaxStopSequences:
		return badf(p+"stopSequences", "generationConfig.stopSequences holds at most %d sequences, got %d", MaxStopSequences, len(gc.StopSequences))
	case gc.PresencePenalty != nil && (*gc.PresencePenalty < -2 || *gc.PresencePenalty >= 2):
		return badf(p+"presencePenalty", "generationConfig.presencePenalty must be in [-2, 2), got %v", *gc.PresencePenalty)
	case gc.FrequencyPenalty != nil && (*gc.FrequencyPenalty < -2 || *gc.FrequencyPenalty >= 2):
		return badf(p+"frequencyPenalty", "generationConfig.frequencyPenalty must be in [-2, 2), got %v", *gc.FrequencyPenalty)
	}
	switch strings.ToLower(gc.ResponseMIMEType) {
	case "", "text/plain", "application/json":
	default:
		return badf(p+"responseMimeType", "generationConfig.responseMimeType must be text/plain or application/json, got %s", apierrors.Quote(gc.ResponseMIMEType))
	}
	if !isObjectOrEmpty(gc.ResponseSchema) || !isObjectOrEmpty(gc.ResponseJSONSchema) {
		return badf(p+"responseSchema", "generationConfig.responseSchema must be a schema object")
	}
	if (len(gc.ResponseSchema) > 0 || len(gc.ResponseJSONSchema) > 0) && !strings.EqualFold(gc.ResponseMIMEType, "application/json") {
		return badf(p+"responseMimeType", "generationConfig.responseSchema needs responseMimeType application/json")
	}
	return nil
}

// FromResult translates a chat backend's whole reply into a Gemini-style
// response: one candidate per choice, its parts the reasoning (a thought
// part, only when thoughts is set), the text and one functionCall per
// tool call (its arguments as args; arguments that are not a JSON object
// make the candidate's finishReason MALFORMED_FUNCTION_CALL instead), and
// the usage as usageMetadata. model names the model in modelVersion
// unless the result names one.
func FromResult(res *chat.Result, model string, thoughts bool) *Response {
	out := &Response{Candidates: make([]Candidate, len(res.Choices)), ModelVersion: model, ResponseID: newResponseID()}
	if res.Model != "" {
		out.ModelVersion = res.Model
	}
	for i := range res.Choices {
		o := &res.Choices[i]
		c := &out.Candidates[i]
		c.Index = i
		c.Content = &Content{Role: RoleModel, Parts: []Part{}}
		if thoughts && o.Reasoning != "" {
			c.Content.Parts = append(c.Content.Parts, Part{Text: o.Reasoning, Thought: true})
		}
		if o.Content != "" {
			c.Content.Parts = append(c.Content.Parts, Part{Text: o.Content})
		}
		c.FinishReason = finishReasonOf(o.FinishReason)
		for _, tc := range o.ToolCalls {
			args, ok := ArgsObject(tc.Function.Arguments)
			if !ok {
				c.FinishReason = FinishMalformedFunctionCall
				continue
			}
			id := tc.ID
			if id == "" {
				id = ids.New("call_")
			}
			c.Content.Parts = append(c.Content.Parts, Part{FunctionCall: &FunctionCall{ID: id, Name: tc.Function.Name, Args: args}})
		}
	}
	u := usageOf(&res.Usage)
	out.UsageMetadata = &u
	return out
}

// newResponseID returns a new random responseId.
func newResponseID() string { return ids.New("") }

// ArgsObject returns a tool call's arguments string as a JSON object for
// args: "" is {}, and anything that is not a JSON object is !ok.
func ArgsObject(arguments string) (json.RawMessage, bool) {
	s := strings.TrimSpace(arguments)
	if s == "" {
		return json.RawMessage("{}"), true
	}
	if s[0] != '{' || !json.Valid([]byte(s)) {
		return nil, false
	}
	return json.RawMessage(s), true
}

// finishReasonOf is the Gemini finishReason of a chat finish reason: stop
// and tool_calls are STOP, length MAX_TOKENS, content_filter SAFETY, any
// other OTHER.
func finishReasonOf(r chat.FinishReason) string {
	switch r {
	case chat.FinishStop, chat.FinishToolCalls, "":
		return FinishStop
	case chat.FinishLength:
		return FinishMaxTokens
	case chat.FinishContentFilter:
		return FinishSafety
	}
	return FinishOther
}

// usageOf is the usageMetadata of a chat usage: the completion tokens
// less the reasoning tokens are candidatesTokenCount, the reasoning
// tokens thoughtsTokenCount, the cached prompt tokens
// cachedContentTokenCount, and the total is the prompt's and the
// completion's.
func usageOf(raw *chat.Usage) UsageMetadata {
	n := raw.Normalized()
	u := &n
	thoughts := 0
	if u.CompletionTokensDetails != nil {
		thoughts = min(max(u.CompletionTokensDetails.ReasoningTokens, 0), u.CompletionTokens)
	}
	return UsageMetadata{
		PromptTokenCount:     u.PromptTokens,
		CandidatesTokenCount: u.CompletionTokens - thoughts,
		ThoughtsTokenCount:   thoughts,
		TotalTokenCount:      u.PromptTokens + u.CompletionTokens,

		CachedContentTokenCount: u.Cached(),
	}
}
