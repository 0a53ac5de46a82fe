package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gatewaykit/gatewaykit/chat"
	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/gemini"
	"github.com/gatewaykit/gatewaykit/internal/ids"
)

// The relay's chat backend for an upstream whose API is [APIGemini]:
// each chat completions request is translated into a Gemini-style
// generateContent request (geminiChatBody), sent to
// {root}/v1beta/models/{model}:generateContent or
// :streamGenerateContent?alt=sse with the key as x-goog-api-key, and the
// reply, the stream, the usage and the errors are translated back.

// speaks reports whether any upstream of model speaks api.
func (r *Relay) speaks(model string, api API) bool {
	for i := range r.routes[model] {
		if r.routes[model][i].API == api {
			return true
		}
	}
	return false
}

// geminiBuild returns the build function of a Gemini-style call with
// body, generateContent, or streamGenerateContent?alt=sse if stream.
func geminiBuild(body []byte, stream bool) attemptBuild {
	return func(ctx context.Context, u *Upstream) (*http.Request, error) {
		method, query := gemini.MethodGenerate, ""
		if stream {
			method, query = gemini.MethodStream, "alt=sse"
		}
		req, err := newJSONRequest(ctx, http.MethodPost, geminiURL(u.BaseURL, u.Model, method, query), body)
		if err != nil {
			return nil, err
		}
		if stream {
			req.Header["Accept"] = []string{"text/event-stream"}
		}
		if u.Key != "" {
			// The key of Google's API; Relay.Do then sends no
			// Authorization header.
			req.Header.Set("X-Goog-Api-Key", u.Key)
		}
		return req, nil
	}
}

// byAPI returns the build function that sends each upstream's request in
// its own format: gemini's for [APIGemini] upstreams, openai's for the
// others.
func byAPI(gemini, openai attemptBuild) attemptBuild {
	return func(ctx context.Context, u *Upstream) (*http.Request, error) {
		if u.API == APIGemini {
			return gemini(ctx, u)
		}
		return openai(ctx, u)
	}
}

// completeGemini is Complete for a model that a Gemini-format upstream
// serves: each upstream in failover order gets the request in its own
// format, and the reply is read in the format of the one that answered.
func (b chatBackend) completeGemini(ctx context.Context, p *chat.Params) (*chat.Result, error) {
	gbody, err := geminiChatBody(p)
	if err != nil {
		return nil, err
	}
	obody, err := parseRequestBody(p.Body(), p.Request)
	if err != nil {
		return nil, err
	}
	res, u, err := b.r.do(ctx, p.Request.Model, byAPI(geminiBuild(gbody, false), postJSON("/chat/completions", obody, false)))
	if err != nil {
		return nil, err
	}
	if u.API != APIGemini {
		var reply chatReply
		raw, err := readCompletion(res, u, reply.decode)
		if err != nil {
			return nil, err
		}
		return b.result(ctx, p, &reply, raw, u)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, upstreamErrorOf(res, u)
	}
	var reply gemini.Response
	if err := readReply(res.Body, u, unmarshalInto(&reply)); err != nil {
		return nil, err
	}
	out, err := geminiChatResult(p, &reply, u)
	if out != nil {
		b.r.chatUsage(ctx, u, &out.Usage)
	}
	return out, err
}

// upstreamErrorOf is UpstreamError, or geminiUpstreamError for a
// Gemini-format upstream.
func upstreamErrorOf(res *http.Response, u *Upstream) error {
	if u.API == APIGemini {
		return geminiUpstreamError(res, u)
	}
	return UpstreamError(res, u)
}

// geminiChatBody translates a chat completions request into the body of a
// Gemini-style request: system and developer messages are the
// systemInstruction; user messages user contents (text parts, image_url
// parts as inlineData for data URIs and fileData for URLs); assistant
// messages model contents (their text, and their tool_calls as
// functionCall parts); tool messages functionResponse parts (named after
// the call they answer, their content the response when it is a JSON
// object, else {"result": content}). Consecutive contents of one role are
// merged. max_completion_tokens (else max_tokens) is maxOutputTokens; n
// candidateCount; temperature, top_p, stop, and the extra members top_k,
// seed, presence_penalty and frequency_penalty carry over;
// response_format json_object is responseMimeType application/json, and
// json_schema adds its schema as responseJsonSchema. Function tools are
// functionDeclarations (their parameters as parametersJsonSchema);
// tool_choice none, auto and required are the modes NONE, AUTO and ANY,
// a named function ANY with that one name allowed. A reasoning model
// ([models.Model] Reasoning) is asked to include its thoughts.
func geminiChatBody(p *chat.Params) ([]byte, error) {
	req := p.Request
	var out gemini.Request
	names := map[string]string{} // tool call id → function name
	add := func(role string, parts ...gemini.Part) {
		if n := len(out.Contents); n > 0 && out.Contents[n-1].Role == role {
			out.Contents[n-1].Parts = append(out.Contents[n-1].Parts, parts...)
			return
		}
		out.Contents = append(out.Contents, gemini.Content{Role: role, Parts: parts})
	}
	for i := range req.Messages {
		m := &req.Messages[i]
		switch m.Role {
		case chat.RoleSystem, chat.RoleDeveloper:
			if out.SystemInstruction == nil {
				out.SystemInstruction = &gemini.Content{}
			}
			out.SystemInstruction.Parts = append(out.SystemInstruction.Parts, gemini.Part{Text: m.Content.String()})
		case chat.RoleAssistant:
			var parts []gemini.Part
			if s := m.Content.String(); s != "" {
				parts = append(parts, gemini.Part{Text: s})
			}
			signed := false
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Function.Name
				args, ok := gemini.ArgsObject(tc.Function.Arguments)
				if !ok {
					return nil, apierrors.InvalidRequestf(fmt.Sprintf("messages[%d].tool_calls", i),
						"messages[%d]: the arguments of tool call %s are not a JSON object, which this model's API requires", i, apierrors.Quote(tc.ID))
				}
				part := gemini.Part{FunctionCall: &gemini.FunctionCall{Name: tc.Function.Name, Args: args}}
				if _, sig := splitSignature(tc.ID); sig != "" {
					part.ThoughtSignature = sig
				} else if !signed {
					// Gemini 3 refuses a function call of the history without
					// the signature its reply carried; a call that did not
					// come from it (another model's) has none, and takes
					// the validator's documented bypass. Only a turn's first
					// call needs one.
					part.ThoughtSignature = skipSignature
				}
				signed = true
				parts = append(parts, part)
			}
			if len(parts) == 0 {
				parts = append(parts, gemini.Part{Text: ""})
			}
			add(gemini.RoleModel, parts...)
		case chat.RoleTool:
			name, ok := names[m.ToolCallID]
			if !ok {
				name = m.Name
			}
			if name == "" {
				return nil, apierrors.InvalidRequestf(fmt.Sprintf("messages[%d].tool_call_id", i),
					"messages[%d]: tool_call_id %s answers no tool call of an earlier assistant message", i, apierrors.Quote(m.ToolCallID))
			}
			text := m.Content.String()
			resp, ok := gemini.ArgsObject(text)
			if !ok || strings.TrimSpace(text) == "" {
				resp, _ = json.Marshal(map[string]string{"result": text})
			}
			add(gemini.RoleUser, gemini.Part{FunctionResponse: &gemini.FunctionResponse{Name: name, Response: resp}})
		default:
			parts, err := geminiUserParts(m, i)
			if err != nil {
				return nil, err
			}
			add(gemini.RoleUser, parts...)
		}
	}
	if gc := geminiConfig(p); !isZeroConfig(&gc) {
		out.GenerationConfig = &gc
	}
	for _, t := range req.Tools {
		if t.Function == nil {
			continue
		}
		if len(out.Tools) == 0 {
			out.Tools = []gemini.Tool{{}}
		}
		out.Tools[0].FunctionDeclarations = append(out.Tools[0].FunctionDeclarations, gemini.FunctionDeclaration{
			Name: t.Function.Name, Description: t.Function.Description, ParametersJSONSchema: t.Function.Parameters})
	}
	if tc := req.ToolChoice; tc != nil && len(out.Tools) > 0 {
		fc := &gemini.FunctionCallingConfig{}
		switch {
		case tc.Function != "":
			fc.Mode, fc.AllowedFunctionNames = gemini.ModeAny, []string{tc.Function}
		case tc.Mode == chat.ToolChoiceRequired:
			fc.Mode = gemini.ModeAny
		case tc.Mode == chat.ToolChoiceNone:
			fc.Mode = gemini.ModeNone
		default:
			fc.Mode = gemini.ModeAuto
		}
		out.ToolConfig = &gemini.ToolConfig{FunctionCallingConfig: fc}
	}
	return json.Marshal(&out)
}

// geminiUserParts translates the content of a user message.
func geminiUserParts(m *chat.Message, i int) ([]gemini.Part, error) {
	if m.Content.Parts == nil {
		return []gemini.Part{{Text: m.Content.String()}}, nil
	}
	parts := make([]gemini.Part, 0, len(m.Content.Parts))
	for j, cp := range m.Content.Parts {
		switch {
		case cp.Type == chat.PartText:
			parts = append(parts, gemini.Part{Text: cp.Text})
		case cp.Type == chat.PartImageURL && cp.ImageURL != nil:
			u := cp.ImageURL.URL
			if rest, ok := strings.CutPrefix(u, "data:"); ok {
				meta, data, _ := strings.Cut(rest, ",")
				parts = append(parts, gemini.Part{InlineData: &gemini.Blob{MIMEType: strings.TrimSuffix(meta, ";base64"), Data: data}})
				continue
			}
			parts = append(parts, gemini.Part{FileData: &gemini.FileData{MIMEType: imageType(u), FileURI: u}})
		default:
			return nil, apierrors.InvalidRequestf(fmt.Sprintf("messages[%d].content[%d].type", i, j),
				"messages[%d].content[%d]: parts of type %s cannot be sent to this model's API", i, j, apierrors.Quote(cp.Type))
		}
	}
	if len(parts) == 0 {
		parts = append(parts, gemini.Part{Text: ""})
	}
	return parts, nil
}

// imageType guesses the media type of an image URL from its extension.
func imageType(u string) string {
	u, _, _ = strings.Cut(u, "?")
	switch {
	case strings.HasSuffix(u, ".png"):
		return "image/png"
	case strings.HasSuffix(u, ".gif"):
		return "image/gif"
	case strings.HasSuffix(u, ".webp"):
		return "image/webp"
	}
	return "image/jpeg"
}

// geminiConfig is the generationConfig of a chat request.
func geminiConfig(p *chat.Params) gemini.GenerationConfig {
	req := p.Request
	gc := gemini.GenerationConfig{Temperature: req.Temperature, TopP: req.TopP, CandidateCount: req.N}
	if n := req.TokenLimit(); n > 0 {
		gc.MaxOutputTokens = &n
	}
	if len(req.Stop) > 0 {
		gc.StopSequences = req.Stop
	}
	extra := func(name string, v any) {
		if raw, ok := req.Extra[name]; ok {
			_ = json.Unmarshal(raw, v)
		}
	}
	extra("top_k", &gc.TopK)
	extra("seed", &gc.Seed)
	extra("presence_penalty", &gc.PresencePenalty)
	extra("frequency_penalty", &gc.FrequencyPenalty)
	if rf := req.ResponseFormat; rf != nil {
		switch rf.Type {
		case chat.FormatJSONObject:
			gc.ResponseMIMEType = "application/json"
		case chat.FormatJSONSchema:
			gc.ResponseMIMEType = "application/json"
			if rf.JSONSchema != nil {
				gc.ResponseJSONSchema = rf.JSONSchema.Schema
			}
		}
	}
	if p.Model != nil && p.Model.Reasoning {
		gc.ThinkingConfig = &gemini.ThinkingConfig{IncludeThoughts: true}
	}
	return gc
}

// geminiFinish is the chat finish reason of a Gemini finishReason.
func geminiFinish(reason string, calls bool) chat.FinishReason {
	switch reason {
	case gemini.FinishMaxTokens:
		return chat.FinishLength
	case gemini.FinishSafety, gemini.FinishRecitation, "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE":
		return chat.FinishContentFilter
	}
	if calls {
		return chat.FinishToolCalls
	}
	return chat.FinishStop
}

// geminiUsage is the chat usage of usageMetadata: the thoughts count as
// completion (reasoning) tokens, as OpenAI counts them, and the cached
// content as the prompt's cached_tokens.
func geminiUsage(m *gemini.UsageMetadata) chat.Usage {
	u := chat.Usage{PromptTokens: m.PromptTokenCount, CompletionTokens: addInts(m.CandidatesTokenCount, m.ThoughtsTokenCount)}
	if m.ThoughtsTokenCount > 0 {
		u.CompletionTokensDetails = &chat.CompletionTokensDetails{ReasoningTokens: m.ThoughtsTokenCount}
	}
	if m.CachedContentTokenCount > 0 {
		u.PromptTokensDetails = &chat.PromptTokensDetails{CachedTokens: m.CachedContentTokenCount}
	}
	u.TotalTokens = addInts(u.PromptTokens, u.CompletionTokens)
	return u
}

// geminiChatResult translates a Gemini-style reply into a chat result. A
// reply whose prompt was blocked (no candidates) is n empty choices that
// end with content_filter.
func geminiChatResult(p *chat.Params, reply *gemini.Response, u *Upstream) (*chat.Result, error) {
	n := p.Request.Choices()
	out := &chat.Result{Choices: make([]chat.Output, n)}
	if len(reply.Candidates) == 0 {
		for i := range out.Choices {
			out.Choices[i].FinishReason = chat.FinishContentFilter
		}
	} else {
		err := byIndex(u, n, reply.Candidates, func(c *gemini.Candidate) int { return c.Index }, func(k int, c *gemini.Candidate) {
			o := &out.Choices[k]
			var text, thought strings.Builder
			if c.Content != nil {
				for _, part := range c.Content.Parts {
					switch {
					case part.FunctionCall != nil:
						o.ToolCalls = append(o.ToolCalls, chat.ToolCall{ID: signedID(part.FunctionCall.ID, part.ThoughtSignature), Type: "function",
							Function: chat.FunctionCall{Name: part.FunctionCall.Name, Arguments: geminiArgs(part.FunctionCall.Args)}})
					case part.Thought:
						thought.WriteString(part.Text)
					default:
						text.WriteString(part.Text)
					}
				}
			}
			o.Content, o.Reasoning = text.String(), thought.String()
			o.FinishReason = geminiFinish(c.FinishReason, len(o.ToolCalls) > 0)
		})
		if err != nil {
			return nil, err
		}
	}
	if reply.UsageMetadata != nil {
		out.Usage = geminiUsage(reply.UsageMetadata)
	} else {
		completion := 0
		for _, o := range out.Choices {
			completion += estimateTokens(o.Content) + estimateTokens(o.Reasoning)
		}
		out.Usage = chat.Usage{PromptTokens: chatPromptTokens(p.Request), CompletionTokens: completion}
	}
	return out, nil
}

// geminiArgs is the arguments string of a function call's args.
func geminiArgs(args json.RawMessage) string {
	if len(args) == 0 || string(args) == "null" {
		return "{}"
	}
	return string(args)
}

// geminiUpstreamError turns a Gemini-format upstream's reply that is not
// a success into the client's error, as [UpstreamError] does, reading
// Google's error object {"error":{"code","message","status","details"}}:
// the status names the code (INVALID_ARGUMENT and FAILED_PRECONDITION
// invalid_request_error, NOT_FOUND not_found, RESOURCE_EXHAUSTED
// rate_limit_exceeded with the wait of its RetryInfo detail, or of
// Retry-After), and an ErrorInfo whose reason is API_KEY_INVALID (Google
// answers a bad key with a 400) is the gateway's key refused: a 502,
// like a 401.
func geminiUpstreamError(res *http.Response, u *Upstream) error {
	status := res.StatusCode
	if status < 400 || status > 499 || refused(status) {
		return UpstreamError(res, u)
	}
	data, readErr := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
	res.Body.Close()
	ge, ok := parseGoogleError(data)
	if !ok {
		// Not Google's object: read it as any other upstream's.
		res.Body = io.NopCloser(strings.NewReader(string(data)))
		return UpstreamError(res, u)
	}
	cause := fmt.Errorf("relay: upstream %s answered %s: %s", u.Name, res.Status, snippet(data, u.Key))
	if readErr != nil {
		cause = fmt.Errorf("%w (reading the body: %s)", cause, Redact(readErr.Error(), u.Key))
	}
	if ge.reason == "API_KEY_INVALID" {
		e := apierrors.BadGateway("The upstream refused the gateway's credentials (API key not valid); "+
			"your API key was accepted: the gateway's operator must fix the upstream key.", cause)
		e.Header = http.Header{"X-Should-Retry": {"false"}}
		return e
	}
	typ, code := defaultTypeAndCode(status)
	switch ge.status {
	case "NOT_FOUND":
		typ, code = apierrors.TypeInvalidRequest, string(apierrors.CodeNotFound)
	case "RESOURCE_EXHAUSTED":
		if status == http.StatusTooManyRequests {
			typ, code = apierrors.TypeRateLimit, string(apierrors.CodeRateLimitExceeded)
		}
	}
	msg := Redact(ge.message, u.Key)
	if msg == "" {
		msg = fmt.Sprintf("The upstream refused the request (HTTP %d %s).", status, http.StatusText(status))
	}
	e := &apierrors.Error{Status: status, Type: typ, Code: apierrors.Code(code), Message: msg, Err: cause}
	if status == http.StatusTooManyRequests {
		e.RetryAfter = ge.retryDelay
		if e.RetryAfter <= 0 {
			e.RetryAfter = retryAfter(res.Header, time.Now())
		}
	}
	return e
}

// googleError is what the relay reads of Google's error object.
type googleError struct {
	message, status, reason string
	retryDelay              time.Duration
}

// parseGoogleError reads {"error":{"code","message","status","details"}}.
func parseGoogleError(data []byte) (googleError, bool) {
	var v struct {
		Error *struct {
			Code    json.Number `json:"code"`
			Message string      `json:"message"`
			Status  string      `json:"status"`
			Details []struct {
				Type       string `json:"@type"`
				Reason     string `json:"reason"`
				RetryDelay string `json:"retryDelay"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &v) != nil || v.Error == nil || v.Error.Status == "" {
		return googleError{}, false
	}
	ge := googleError{message: v.Error.Message, status: v.Error.Status}
	for _, d := range v.Error.Details {
		switch {
		case strings.HasSuffix(d.Type, "google.rpc.ErrorInfo"):
			ge.reason = d.Reason
		case strings.HasSuffix(d.Type, "google.rpc.RetryInfo"):
			if dur, err := time.ParseDuration(d.RetryDelay); err == nil && dur > 0 {
				ge.retryDelay = dur
			}
		}
	}
	return ge, true
}

// errGeminiEnded is the cause of a Gemini-format stream that ended before
// every candidate had its finishReason.
var errGeminiEnded = errors.New("the stream ended before its finishReason")

// isZeroConfig reports whether gc sets nothing.
func isZeroConfig(gc *gemini.GenerationConfig) bool {
	b, _ := json.Marshal(gc)
	return string(b) == "{}"
}

// A Gemini model's function call carries a thought signature that must
// come back with the call in the next turn's history (Gemini 3 refuses the
// request otherwise). The chat format has no place for it but the call's
// id, which clients send back as they got it: the id of such a call is
// its own (or a new "call_…" one), signatureSep and the signature.
const signatureSep = "__thought__"

// skipSignature is the signature that Google documents for a function
// call whose signature is not known (a history from another model).
const skipSignature = "skip_thought_signature_validator"

// signedID is the chat id of a function call with id and signature sig.
func signedID(id, sig string) string {
	if sig == "" {
		return id
	}
	if id == "" {
		id = ids.New("call_")
	}
	return id + signatureSep + sig
}

// splitSignature splits a chat tool call id made by signedID.
func splitSignature(id string) (string, string) {
	base, sig, _ := strings.Cut(id, signatureSep)
	return base, sig
}
