package gemini

import "encoding/json"

// The roles of a [Content].
const (
	RoleUser  = "user"
	RoleModel = "model"
)

// The finish reasons of a [Candidate] that the translation sends and reads.
const (
	FinishStop                  = "STOP"
	FinishMaxTokens             = "MAX_TOKENS"
	FinishSafety                = "SAFETY"
	FinishRecitation            = "RECITATION"
	FinishOther                 = "OTHER"
	FinishMalformedFunctionCall = "MALFORMED_FUNCTION_CALL"
)

// The modes of a [FunctionCallingConfig].
const (
	ModeAuto      = "AUTO"
	ModeAny       = "ANY"
	ModeNone      = "NONE"
	ModeValidated = "VALIDATED"
)

// Request is the body of :generateContent and :streamGenerateContent. The
// model is not in it: it comes from the path.
//
// Members that Request does not model (safetySettings, cachedContent,
// labels, …) are accepted and ignored: nothing in a chat backend's
// params carries them.
type Request struct {
	Contents          []Content         `json:"contents"`
	SystemInstruction *Content          `json:"systemInstruction,omitempty"`
	GenerationConfig  *GenerationConfig `json:"generationConfig,omitempty"`
	Tools             []Tool            `json:"tools,omitempty"`
	ToolConfig        *ToolConfig       `json:"toolConfig,omitempty"`
}

// Content is one turn of the conversation, or the system instruction.
// Role is "user" or "model" ("" is user; a system instruction has none).
type Content struct {
	Role  string `json:"role,omitempty"`
	Parts []Part `json:"parts"`
}

// Part is one part of a [Content]: exactly one of Text, InlineData,
// FileData, FunctionCall and FunctionResponse is set. Thought marks the
// text of a model's reasoning; ThoughtSignature is opaque and passed on.
type Part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	InlineData       *Blob             `json:"inlineData,omitempty"`
	FileData         *FileData         `json:"fileData,omitempty"`
	FunctionCall     *FunctionCall     `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
}

// Blob is inline data: base64 bytes and their media type.
type Blob struct {
	MIMEType string `json:"mimeType"`
	Data     string `json:"data"`
}

// FileData refers to data by URI.
type FileData struct {
	MIMEType string `json:"mimeType,omitempty"`
	FileURI  string `json:"fileUri"`
}

// FunctionCall is a call of a declared function that the model makes.
// Args is a JSON object. ID is optional on the wire; the translation
// fills it in so that a client can answer the call by its id.
type FunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// FunctionResponse is the result of a [FunctionCall], sent back by the
// client. Response is a JSON object.
type FunctionResponse struct {
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response,omitempty"`
}

// GenerationConfig holds the sampling and output settings of a request.
type GenerationConfig struct {
	MaxOutputTokens    *int            `json:"maxOutputTokens,omitempty"`
	Temperature        *float64        `json:"temperature,omitempty"`
	TopP               *float64        `json:"topP,omitempty"`
	TopK               *int            `json:"topK,omitempty"`
	StopSequences      []string        `json:"stopSequences,omitempty"`
	CandidateCount     *int            `json:"candidateCount,omitempty"`
	ResponseMIMEType   string          `json:"responseMimeType,omitempty"`
	ResponseSchema     json.RawMessage `json:"responseSchema,omitempty"`
	ResponseJSONSchema json.RawMessage `json:"responseJsonSchema,omitempty"`
	PresencePenalty    *float64        `json:"presencePenalty,omitempty"`
	FrequencyPenalty   *float64        `json:"frequencyPenalty,omitempty"`
	Seed               *int64          `json:"seed,omitempty"`
	ThinkingConfig     *ThinkingConfig `json:"thinkingConfig,omitempty"`
}

// ThinkingConfig asks for a reasoning model's thoughts (IncludeThoughts)
// and bounds them (ThinkingBudget, in tokens).
type ThinkingConfig struct {
	IncludeThoughts bool `json:"includeThoughts,omitempty"`
	ThinkingBudget  *int `json:"thinkingBudget,omitempty"`
}

// Tool is a set of function declarations. Tools of other kinds
// (googleSearch, codeExecution, …) have no declarations and are refused.
type Tool struct {
	FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations,omitempty"`
	// Other holds the tool's members that are not functionDeclarations,
	// by name (decoding only).
	Other map[string]json.RawMessage `json:"-"`
}

// UnmarshalJSON decodes a tool, keeping its other members in Other.
func (t *Tool) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*t = Tool{}
	for k, v := range m {
		if k == "functionDeclarations" {
			if err := json.Unmarshal(v, &t.FunctionDeclarations); err != nil {
				return err
			}
			continue
		}
		if t.Other == nil {
			t.Other = make(map[string]json.RawMessage)
		}
		t.Other[k] = v
	}
	return nil
}

// FunctionDeclaration declares a function the model may call. Parameters
// is an OpenAPI schema object (Google's Schema, with upper-case type
// names allowed); ParametersJSONSchema a JSON Schema.
type FunctionDeclaration struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description,omitempty"`
	Parameters           json.RawMessage `json:"parameters,omitempty"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema,omitempty"`
}

// ToolConfig configures function calling.
type ToolConfig struct {
	FunctionCallingConfig *FunctionCallingConfig `json:"functionCallingConfig,omitempty"`
}

// FunctionCallingConfig is the mode of function calling (AUTO, ANY,
// NONE, VALIDATED) and the functions ANY may call.
type FunctionCallingConfig struct {
	Mode                 string   `json:"mode,omitempty"`
	AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
}

// Response is the reply of :generateContent, and each event of
// :streamGenerateContent.
type Response struct {
	Candidates    []Candidate    `json:"candidates,omitempty"`
	UsageMetadata *UsageMetadata `json:"usageMetadata,omitempty"`
	ModelVersion  string         `json:"modelVersion,omitempty"`
	ResponseID    string         `json:"responseId,omitempty"`
}

// Candidate is one output of a [Response]. Content is absent in a stream
// event that only ends the candidate.
type Candidate struct {
	Content      *Content `json:"content,omitempty"`
	FinishReason string   `json:"finishReason,omitempty"`
	Index        int      `json:"index"`
}

// UsageMetadata counts a reply's tokens. CandidatesTokenCount excludes
// the thoughts, which ThoughtsTokenCount counts; TotalTokenCount is the
// sum of the three. CachedContentTokenCount is the part of the prompt
// read from the context cache (a chat usage's cached_tokens).
type UsageMetadata struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount,omitempty"`
	TotalTokenCount         int `json:"totalTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
}

// MarshalJSON encodes a part; a part with nothing else set has its text,
// empty as it may be ({"text":""}, as Google's API sends the part of an
// event that only ends a candidate).
func (p Part) MarshalJSON() ([]byte, error) {
	type plain Part
	if p.Text != "" || p.InlineData != nil || p.FileData != nil || p.FunctionCall != nil || p.FunctionResponse != nil {
		return json.Marshal(plain(p))
	}
	return json.Marshal(struct {
		Text string `json:"text"`
		plain
	}{plain: plain(p)})
}
