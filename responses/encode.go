package responses

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
)

// The output items and the per-token stream events are encoded by hand,
// by appending to a byte slice: they are the hot path of a stream, and
// their shapes are fixed. Tests check that the bytes decode to the same
// values as encoding/json gives for the exported wire types. The
// lifecycle events that carry the whole response (one or two per stream)
// go through encoding/json.

// appendOutputItem appends an output item with the members of its type.
func appendOutputItem(b []byte, it *OutputItem) []byte {
	b = append(b, `{"id":`...)
	b = jsonenc.AppendString(b, it.ID)
	b = append(b, `,"type":`...)
	b = jsonenc.AppendString(b, it.Type)
	b = append(b, `,"status":`...)
	b = jsonenc.AppendString(b, string(it.Status))
	switch it.Type {
	case ItemReasoning:
		b = append(b, `,"summary":[`...)
		for i := range it.Summary {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendSummaryText(b, it.Summary[i].Text)
		}
		b = append(b, ']')
	case ItemFunctionCall:
		b = append(b, `,"call_id":`...)
		b = jsonenc.AppendString(b, it.CallID)
		b = append(b, `,"name":`...)
		b = jsonenc.AppendString(b, it.Name)
		b = append(b, `,"arguments":`...)
		b = jsonenc.AppendString(b, it.Arguments)
	default:
		b = append(b, `,"role":`...)
		b = jsonenc.AppendString(b, it.Role)
		b = append(b, `,"content":[`...)
		for i := range it.Content {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendOutputText(b, &it.Content[i])
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendOutputText appends an output_text part.
func appendOutputText(b []byte, p *OutputText) []byte {
	typ := p.Type
	if typ == "" {
		typ = PartOutputText
	}
	b = append(b, `{"type":`...)
	b = jsonenc.AppendString(b, typ)
	b = append(b, `,"text":`...)
	b = jsonenc.AppendString(b, p.Text)
	b = append(b, `,"annotations":[`...)
	for i, a := range p.Annotations {
		if i > 0 {
			b = append(b, ',')
		}
		if len(a) == 0 {
			a = []byte("null")
		}
		b = append(b, a...)
	}
	return append(b, "]}"...)
}

// appendSummaryText appends a summary_text part.
func appendSummaryText(b []byte, text string) []byte {
	b = append(b, `{"type":"`+PartSummary+`","text":`...)
	b = jsonenc.AppendString(b, text)
	return append(b, '}')
}

// appendSummaryEvent appends an event of summary part 0 of a reasoning
// item: response.reasoning_summary_text.delta (key "delta"), .done (key
// "text"), or response.reasoning_summary_part.added or .done (key "part",
// the part with text).
func appendSummaryEvent(b []byte, typ string, seq int, ref []byte, key, text string) []byte {
	b = appendEventHead(b, typ, seq)
	b = append(b, ref...)
	b = append(b, `,"summary_index":0,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	if key == "part" {
		b = appendSummaryText(b, text)
	} else {
		b = jsonenc.AppendString(b, text)
	}
	return append(b, '}')
}

// appendEventHead appends the start of an event object, up to and
// including its sequence number: {"type":…,"sequence_number":n.
func appendEventHead(b []byte, typ string, seq int) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...) // event types are constants without escapes
	b = append(b, `","sequence_number":`...)
	return strconv.AppendInt(b, int64(seq), 10)
}

// appendItemRef appends the members that place an event in the output:
// ,"item_id":…,"output_index":n. The event encoders take them encoded
// (ref), once per item rather than once per event.
func appendItemRef(b []byte, itemID string, output int) []byte {
	b = append(b, `,"item_id":`...)
	b = jsonenc.AppendString(b, itemID)
	b = append(b, `,"output_index":`...)
	return strconv.AppendInt(b, int64(output), 10)
}

// appendTextEvent appends response.output_text.delta (delta set) or
// response.output_text.done (text set) for content part 0.
func appendTextEvent(b []byte, typ string, seq int, ref []byte, key, text string) []byte {
	b = appendEventHead(b, typ, seq)
	b = append(b, ref...)
	b = append(b, `,"content_index":0,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = jsonenc.AppendString(b, text)
	return append(b, `,"logprobs":[]}`...)
}

// appendArgumentsEvent appends response.function_call_arguments.delta
// (key "delta") or the .done event (key "arguments", with the name).
func appendArgumentsEvent(b []byte, typ string, seq int, ref []byte, key, args, name string) []byte {
	b = appendEventHead(b, typ, seq)
	b = append(b, ref...)
	b = append(b, `,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = jsonenc.AppendString(b, args)
	if name != "" {
		b = append(b, `,"name":`...)
		b = jsonenc.AppendString(b, name)
	}
	return append(b, '}')
}

// appendPartEvent appends response.content_part.added or .done, with its
// output_text part.
func appendPartEvent(b []byte, typ string, seq int, ref []byte, text string) []byte {
	b = appendEventHead(b, typ, seq)
	b = append(b, ref...)
	b = append(b, `,"content_index":0,"part":`...)
	b = appendOutputText(b, &OutputText{Text: text})
	return append(b, '}')
}

// appendItemEvent appends response.output_item.added or .done.
func appendItemEvent(b []byte, typ string, seq int, output int, it *OutputItem) []byte {
	b = appendEventHead(b, typ, seq)
	b = append(b, `,"output_index":`...)
	b = strconv.AppendInt(b, int64(output), 10)
	b = append(b, `,"item":`...)
	b = appendOutputItem(b, it)
	return append(b, '}')
}

// appendResponse appends the response object, as encoding/json encodes
// [Response] without its MarshalJSON method (tests check it).
func appendResponse(b []byte, r *Response) ([]byte, error) {
	b = append(b, `{"id":`...)
	b = jsonenc.AppendString(b, r.ID)
	b = append(b, `,"object":`...)
	b = jsonenc.AppendString(b, r.Object)
	b = append(b, `,"created_at":`...)
	b = strconv.AppendInt(b, r.CreatedAt, 10)
	b = append(b, `,"status":`...)
	b = jsonenc.AppendString(b, string(r.Status))
	b = append(b, `,"completed_at":`...)
	if r.CompletedAt != nil {
		b = strconv.AppendInt(b, *r.CompletedAt, 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"error":`...)
	if e := r.Error; e != nil {
		b = append(b, `{"code":`...)
		b = jsonenc.AppendString(b, e.Code)
		b = append(b, `,"message":`...)
		b = jsonenc.AppendString(b, e.Message)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"incomplete_details":`...)
	if d := r.IncompleteDetails; d != nil {
		b = append(b, `{"reason":`...)
		b = jsonenc.AppendString(b, d.Reason)
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"instructions":`...)
	b = appendStringPtr(b, r.Instructions)
	b = append(b, `,"max_output_tokens":`...)
	if r.MaxOutputTokens != nil {
		b = strconv.AppendInt(b, int64(*r.MaxOutputTokens), 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"model":`...)
	b = jsonenc.AppendString(b, r.Model)
	b = append(b, `,"output":`...)
	if r.Output == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range r.Output {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendOutputItem(b, &r.Output[i])
		}
		b = append(b, ']')
	}
	b = append(b, `,"parallel_tool_calls":`...)
	b = strconv.AppendBool(b, r.ParallelToolCalls)
	b = append(b, `,"previous_response_id":`...)
	b = appendStringPtr(b, r.PreviousResponseID)
	b = append(b, `,"store":`...)
	b = strconv.AppendBool(b, r.Store)
	b = append(b, `,"temperature":`...)
	b = appendFloatPtr(b, r.Temperature)
	b = append(b, `,"tool_choice":`...)
	if tc := &r.ToolChoice; tc.Raw == nil && tc.Function == "" && tc.Mode != "" {
		b = jsonenc.AppendString(b, tc.Mode)
	} else {
		raw, err := tc.MarshalJSON()
		if err != nil {
			return b, err
		}
		b = append(b, raw...)
	}
	b = append(b, `,"text":`...)
	switch f := r.Text.Format; {
	case len(r.Text.Extra) > 0 || (f != nil && (f.Name != "" || f.Description != "" || f.Schema != nil || f.Strict != nil)):
		text, err := r.Text.MarshalJSON()
		if err != nil {
			return b, err
		}
		b = append(b, text...)
	case f != nil:
		b = append(b, `{"format":{"type":`...)
		b = jsonenc.AppendString(b, f.Type)
		b = append(b, "}}"...)
	default:
		b = append(b, "{}"...)
	}
	b = append(b, `,"tools":`...)
	if len(r.Tools) == 0 && r.Tools != nil {
		b = append(b, "[]"...)
	} else {
		tools, err := json.Marshal(r.Tools)
		if err != nil {
			return b, err
		}
		b = append(b, tools...)
	}
	b = append(b, `,"top_p":`...)
	b = appendFloatPtr(b, r.TopP)
	b = append(b, `,"metadata":`...)
	switch {
	case r.Metadata == nil:
		b = append(b, "null"...)
	case len(r.Metadata) == 0:
		b = append(b, "{}"...)
	default:
		b = append(b, '{')
		for i, k := range slices.Sorted(maps.Keys(r.Metadata)) {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.AppendString(b, k)
			b = append(b, ':')
			b = jsonenc.AppendString(b, r.Metadata[k])
		}
		b = append(b, '}')
	}
	b = append(b, `,"usage":`...)
	if u := r.Usage; u != nil {
		b = appendUsage(b, u)
	} else {
		b = append(b, "null"...)
	}
	return append(b, '}'), nil
}

// appendUsage appends a usage object.
func appendUsage(b []byte, u *Usage) []byte {
	b = append(b, `{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(u.InputTokens), 10)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(u.InputTokensDetails.CachedTokens), 10)
	b = append(b, `},"output_tokens":`...)
	b = strconv.AppendInt(b, int64(u.OutputTokens), 10)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = strconv.AppendInt(b, int64(u.OutputTokensDetails.ReasoningTokens), 10)
	b = append(b, `},"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.TotalTokens), 10)
	return append(b, '}')
}

func appendStringPtr(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return jsonenc.AppendString(b, *s)
}

// appendFloatPtr appends a number as encoding/json writes a float64, or
// null.
func appendFloatPtr(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	v := *f
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return append(b, "null"...) // not JSON; the validator rejects them before
	}
	abs := math.Abs(v)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendResponseEvent appends a lifecycle event carrying the whole
// response.
func appendResponseEvent(b []byte, typ string, seq int, r *Response) ([]byte, error) {
	b = appendEventHead(b, typ, seq)
	b = append(b, `,"response":`...)
	b, err := appendResponse(b, r)
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}
