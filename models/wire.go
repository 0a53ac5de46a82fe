package models

import "time"

// The wire forms of GET /v1/models and its variants. They are exported so
// that clients and relays can decode the lists; [NewHandler] fills them
// from [Model] as documented on each field.

// OpenAIList is the default list: {"object":"list","data":[…]}.
type OpenAIList struct {
	Object string        `json:"object"` // always "list"
	Data   []OpenAIModel `json:"data"`   // never null
}

// OpenAIModel is a model in the OpenAI format, also the body of
// GET /v1/models/{id}.
type OpenAIModel struct {
	ID                     string         `json:"id"`
	Object                 string         `json:"object"` // always "model"
	Created                int64          `json:"created"`
	OwnedBy                string         `json:"owned_by"`
	SupportedEndpointTypes []EndpointType `json:"supported_endpoint_types"` // never null
	// Reasoning is true for a reasoning model ([Model].Reasoning), whose
	// replies carry reasoning_content; left out otherwise. It and Video
	// are gatewaykit's additions to OpenAI's model object, so that a
	// client (the browser console) can shape its controls.
	Reasoning bool `json:"reasoning,omitempty"`
	// Video is a video model's capabilities ([Model].Video): the modes,
	// seconds, sizes and resolutions its create requests accept; left out
	// when the model sets none.
	Video *VideoCapabilities `json:"video,omitempty"`
}

// AnthropicList is the messages-format list, Anthropic's shape: a page of
// models with has_more and the ids of its first and last entries (null
// when the page is empty).
type AnthropicList struct {
	Data    []AnthropicModel `json:"data"` // never null
	HasMore bool             `json:"has_more"`
	FirstID *string          `json:"first_id"`
	LastID  *string          `json:"last_id"`
}

// AnthropicModel is a model in the messages format.
type AnthropicModel struct {
	Type           string `json:"type"` // always "model"
	ID             string `json:"id"`
	DisplayName    string `json:"display_name"`               // DisplayName, or the id
	CreatedAt      string `json:"created_at"`                 // Created as RFC 3339, UTC
	MaxInputTokens int    `json:"max_input_tokens,omitempty"` // InputTokenLimit
	MaxTokens      int    `json:"max_tokens,omitempty"`       // OutputTokenLimit
}

// GeminiList is the Gemini-style list (Google's models.list response).
// NextPageToken is left out on the last page.
type GeminiList struct {
	Models        []GeminiModel `json:"models"` // never null
	NextPageToken string        `json:"nextPageToken,omitempty"`
}

// GeminiModel is a model in the Gemini style (Google's Model resource),
// also the body of GET /v1beta/models/{id}.
type GeminiModel struct {
	Name             string `json:"name"`        // "models/<id>"
	BaseModelID      string `json:"baseModelId"` // the id
	Version          string `json:"version"`     // Version, or "1"
	DisplayName      string `json:"displayName"` // DisplayName, or the id
	Description      string `json:"description,omitempty"`
	InputTokenLimit  int    `json:"inputTokenLimit,omitempty"`
	OutputTokenLimit int    `json:"outputTokenLimit,omitempty"`
	// SupportedGenerationMethods is ["generateContent",
	// "streamGenerateContent"] for a model with [Compat] (the endpoints
	// POST /v1beta/models/{model}:generateContent and
	// :streamGenerateContent), and [] otherwise.
	SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
	Thinking                   bool     `json:"thinking,omitempty"` // Reasoning
}

func toOpenAI(m *Model) OpenAIModel {
	types := m.EndpointTypes
	if types == nil {
		types = []EndpointType{}
	}
	return OpenAIModel{
		ID:                     m.ID,
		Object:                 "model",
		Created:                m.Created,
		OwnedBy:                m.OwnedBy,
		SupportedEndpointTypes: types,
		Reasoning:              m.Reasoning,
		Video:                  m.Video,
	}
}

func toAnthropic(m *Model) AnthropicModel {
	return AnthropicModel{
		Type:           "model",
		ID:             m.ID,
		DisplayName:    displayName(m),
		CreatedAt:      time.Unix(m.Created, 0).UTC().Format(time.RFC3339),
		MaxInputTokens: m.InputTokenLimit,
		MaxTokens:      m.OutputTokenLimit,
	}
}

func toGemini(m *Model) GeminiModel {
	version := m.Version
	if version == "" {
		version = "1"
	}
	methods := []string{}
	if m.Supports(Compat) {
		methods = append(methods, "generateContent", "streamGenerateContent")
	}
	return GeminiModel{
		Name:                       "models/" + m.ID,
		BaseModelID:                m.ID,
		Version:                    version,
		DisplayName:                displayName(m),
		Description:                m.Description,
		InputTokenLimit:            m.InputTokenLimit,
		OutputTokenLimit:           m.OutputTokenLimit,
		SupportedGenerationMethods: methods,
		Thinking:                   m.Reasoning,
	}
}

func displayName(m *Model) string {
	if m.DisplayName != "" {
		return m.DisplayName
	}
	return m.ID
}
