package responses

import (
	"encoding/json"
	"strconv"

	"github.com/gatewaykit/gatewaykit/internal/jsonenc"
)

// The output items and the per-token stream events are encoded by hand,
// by appending to a byte slice: they are the hot path of a stream (every
// event but three), and their shapes are fixed. Tests and fuzz targets
// check that the bytes decode to the same values as encoding/json gives
// for the exported wire types. The response object itself (JSON replies,
// and the three lifecycle events of a stream that carry it) goes through
// encoding/json.

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
		if it.EncryptedContent != "" {
			b = append(b, `,"encrypted_content":`...)
			b = jsonenc.AppendString(b, it.EncryptedContent)
		}
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

// appendResponseEvent appends a lifecycle event carrying the whole
// response.
func appendResponseEvent(b []byte, typ string, seq int, r *Response) ([]byte, error) {
	b = appendEventHead(b, typ, seq)
	b = append(b, `,"response":`...)
	resp, err := json.Marshal(r)
	if err != nil {
		return b, err
	}
	return append(append(b, resp...), '}'), nil
}
