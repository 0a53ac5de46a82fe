package gemini_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/gemini"
)

func TestToChat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		req  string // a Gemini-style request
		want string // the chat request, as JSON
	}{
		{name: "text and system instruction",
			req:  `{"contents":[{"role":"user","parts":[{"text":"Hi"}]}],"systemInstruction":{"parts":[{"text":"Be"},{"text":"brief."}]}}`,
			want: `{"model":"m","messages":[{"role":"system","content":"Be\nbrief."},{"role":"user","content":"Hi"}]}`},
		{name: "no role is user",
			req:  `{"contents":[{"parts":[{"text":"Hi"}]}]}`,
			want: `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`},
		{name: "images",
			req: `{"contents":[{"parts":[{"text":"Look"},{"inlineData":{"mimeType":"image/png","data":"AAAA"}},{"fileData":{"mimeType":"image/jpeg","fileUri":"https://x.test/a.jpg"}}]}]}`,
			want: `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"Look"},` +
				`{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},{"type":"image_url","image_url":{"url":"https://x.test/a.jpg"}}]}]}`},
		{name: "model turn with text, thought and calls",
			req: `{"contents":[{"parts":[{"text":"Go"}]},{"role":"model","parts":[{"text":"hmm","thought":true},{"text":"Sure."},` +
				`{"functionCall":{"name":"f","args":{"a": 1}}},{"functionCall":{"id":"c9","name":"g"}}]},` +
				`{"parts":[{"functionResponse":{"name":"g","id":"c9","response":{"ok":true}}},{"functionResponse":{"name":"f","response":{"r":2}}},{"text":"next"}]}]}`,
			want: `{"model":"m","messages":[{"role":"user","content":"Go"},` +
				`{"role":"assistant","content":"Sure.","tool_calls":[{"id":"call_1_2","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"id":"c9","type":"function","function":{"name":"g","arguments":"{}"}}]},` +
				`{"role":"tool","content":"{\"ok\":true}","tool_call_id":"c9"},{"role":"tool","content":"{\"r\":2}","tool_call_id":"call_1_2"},{"role":"user","content":"next"}]}`},
		{name: "model turn with calls only has null content",
			req:  `{"contents":[{"parts":[{"text":"Go"}]},{"role":"model","parts":[{"functionCall":{"name":"f"}}]}]}`,
			want: `{"model":"m","messages":[{"role":"user","content":"Go"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1_0","type":"function","function":{"name":"f","arguments":"{}"}}]}]}`},
		{name: "generation config",
			req: `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"maxOutputTokens":50,"temperature":0.2,"topP":0.5,"topK":3,` +
				`"stopSequences":["a","b"],"candidateCount":2,"seed":9,"presencePenalty":0.1,"frequencyPenalty":0.3,"responseMimeType":"application/json"}}`,
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"temperature":0.2,"top_p":0.5,"n":2,"max_completion_tokens":50,"stop":["a","b"],` +
				`"response_format":{"type":"json_object"},"top_k":3,"seed":9,"presence_penalty":0.1,"frequency_penalty":0.3}`},
		{name: "response schema, types lower-cased",
			req: `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"application/json",` +
				`"responseSchema":{"type":"OBJECT","properties":{"type":{"type":"STRING"}},"propertyOrdering":["type"]}}}`,
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"response_format":{"type":"json_schema","json_schema":{"name":"response",` +
				`"schema":{"type":"object","properties":{"type":{"type":"string"}}}}}}`},
		{name: "tools and mode AUTO",
			req: `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","description":"F.","parameters":{"type":"OBJECT"}},` +
				`{"name":"g","parametersJsonSchema":{"type":"object"}}]}],"toolConfig":{"functionCallingConfig":{"mode":"AUTO"}}}`,
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f","description":"F.","parameters":{"type":"object"}}},` +
				`{"type":"function","function":{"name":"g","parameters":{"type":"object"}}}],"tool_choice":"auto"}`},
		{name: "mode ANY with one name forces it",
			req:  `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f"},{"name":"g"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["g"]}}}`,
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g"}}],"tool_choice":{"type":"function","function":{"name":"g"}}}`},
		{name: "mode ANY with names narrows the tools",
			req: `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f"},{"name":"g"},{"name":"h"}]}],` +
				`"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["f","h"]}}}`,
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"h"}}],"tool_choice":"required"}`},
		{name: "mode NONE",
			req:  `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"NONE"}}}`,
			want: `{"model":"m","messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],"tool_choice":"none"}`},
		{name: "snake_case members",
			req: `{"contents":[{"parts":[{"inline_data":{"mime_type":"image/png","data":"AAAA"}}]}],"system_instruction":{"parts":[{"text":"S"}]},` +
				`"generation_config":{"max_output_tokens":5},"tools":[{"function_declarations":[{"name":"f","parameters":{"type":"OBJECT","properties":{"my_arg":{"type":"STRING"}}}}]}]}`,
			want: `{"model":"m","messages":[{"role":"system","content":"S"},{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]}],` +
				`"max_completion_tokens":5,"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"my_arg":{"type":"string"}}}}}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := gemini.DecodeRequest([]byte(tc.req))
			require.NoError(t, err)
			got, err := gemini.ToChat("m", req)
			require.NoError(t, err)
			b, err := json.Marshal(got)
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(b))
		})
	}
}

func TestToChatRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, req, param, msg string
	}{
		{"no contents", `{}`, "contents", "contents is not specified"},
		{"empty parts", `{"contents":[{"parts":[]}]}`, "contents[0].parts", "must not be empty"},
		{"unknown role", `{"contents":[{"role":"system","parts":[{"text":"x"}]}]}`, "contents[0].role", "must be user or model"},
		{"two kinds in a part", `{"contents":[{"parts":[{"text":"x","inlineData":{"mimeType":"image/png","data":"AA"}}]}]}`, "contents[0].parts[0]", "exactly one of"},
		{"audio", `{"contents":[{"parts":[{"inlineData":{"mimeType":"audio/wav","data":"AA"}}]}]}`, "contents[0].parts[0].inlineData.mimeType", "an image type"},
		{"file uri not http", `{"contents":[{"parts":[{"fileData":{"fileUri":"gs://b/o.png"}}]}]}`, "contents[0].parts[0].fileData.fileUri", "http(s) URL"},
		{"user calls", `{"contents":[{"parts":[{"functionCall":{"name":"f"}}]}]}`, "contents[0].parts[0].functionCall", "only a model turn"},
		{"call without name", `{"contents":[{"role":"model","parts":[{"functionCall":{"args":{}}}]}]}`, "contents[0].parts[0].functionCall.name", "is required"},
		{"args not an object", `{"contents":[{"role":"model","parts":[{"functionCall":{"name":"f","args":[1]}}]}]}`, "contents[0].parts[0].functionCall.args", "must be an object"},
		{"response without name", `{"contents":[{"parts":[{"functionResponse":{"response":{}}}]}]}`, "contents[0].parts[0].functionResponse.name", "is required"},
		{"temperature", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"temperature":3}}`, "generationConfig.temperature", "[0, 2]"},
		{"topP", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"topP":1.5}}`, "generationConfig.topP", "[0, 1]"},
		{"topK", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"topK":0}}`, "generationConfig.topK", "at least 1"},
		{"maxOutputTokens", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"maxOutputTokens":0}}`, "generationConfig.maxOutputTokens", "at least 1"},
		{"candidateCount", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"candidateCount":9}}`, "generationConfig.candidateCount", "1 to 8"},
		{"stopSequences", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"stopSequences":["a","b","c","d","e","f"]}}`, "generationConfig.stopSequences", "at most 5"},
		{"mime type", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseMimeType":"text/x.enum"}}`, "generationConfig.responseMimeType", "text/plain or application/json"},
		{"schema without json", `{"contents":[{"parts":[{"text":"x"}]}],"generationConfig":{"responseSchema":{"type":"OBJECT"}}}`, "generationConfig.responseMimeType", "needs responseMimeType"},
		{"search tool", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"googleSearch":{}}]}`, "tools[0].googleSearch", "not supported"},
		{"declaration without name", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{}]}]}`, "tools[0].functionDeclarations[0].name", "is required"},
		{"declared twice", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f"},{"name":"f"}]}]}`, "tools[0].functionDeclarations[1].name", "declared twice"},
		{"unknown mode", `{"contents":[{"parts":[{"text":"x"}]}],"toolConfig":{"functionCallingConfig":{"mode":"SOMETIMES"}}}`, "toolConfig.functionCallingConfig.mode", "AUTO, ANY, NONE or VALIDATED"},
		{"allowed name undeclared", `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f"}]}],"toolConfig":{"functionCallingConfig":{"mode":"ANY","allowedFunctionNames":["g"]}}}`,
			"toolConfig.functionCallingConfig.allowedFunctionNames[0]", `no function "g"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := gemini.DecodeRequest([]byte(tc.req))
			require.NoError(t, err)
			_, err = gemini.ToChat("m", req)
			var e *apierrors.Error
			require.ErrorAs(t, err, &e)
			require.Equal(t, 400, e.Status)
			require.Equal(t, tc.param, e.Param)
			require.Contains(t, e.Message, tc.msg)
		})
	}
}
