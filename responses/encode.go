package responses

import (
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

// appendEventHead appends the start of an event object, up to and
// including its sequence number: {"type":…,"sequence_number":n.
func appendEventHead(b []byte, typ string, seq int) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...) // event types are constants without escapes
	b = append(b, `","sequence_number":`...)
	return strconv.AppendInt(b, int64(seq), 10)
}

// appendItemRef appends the members that place an event in the output:
// ,"item_id":…,"output_index":n.
func appendItemRef(b []byte, itemID string, output int) []byte {
	b = append(b, `,"item_id":`...)
	b = jsonenc.AppendString(b, itemID)
	b = append(b, `,"output_index":`...)
	return strconv.AppendInt(b, int64(output), 10)
}

// appendTextEvent appends response.output_text.delta (delta set) or
// response.output_text.done (text set) for content part 0.
func appendTextEvent(b []byte, typ string, seq int, itemID string, output int, key, text string) []byte {
	b = appendEventHead(b, typ, seq)
	b = appendItemRef(b, itemID, output)
	b = append(b, `,"content_index":0,"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	b = jsonenc.AppendString(b, text)
	return append(b, `,"logprobs":[]}`...)
}

// appendArgumentsEvent appends response.function_call_arguments.delta
// (key "delta") or the .done event (key "arguments", with the name).
func appendArgumentsEvent(b []byte, typ string, seq int, itemID string, output int, key, args, name string) []byte {
	b = appendEventHead(b, typ, seq)
	b = appendItemRef(b, itemID, output)
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
func appendPartEvent(b []byte, typ string, seq int, itemID string, output int, text string) []byte {
	b = appendEventHead(b, typ, seq)
	b = appendItemRef(b, itemID, output)
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
