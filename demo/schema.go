package demo

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// sampleJSON returns a JSON value that satisfies the parts of schema the
// demo understands, with str as the value of every string:
//
//   - const, then the first of enum, then the first of anyOf or oneOf;
//   - "object" (or properties, or the top level, without a type): an
//     object holding the
//     required properties, in the order of required, each sampled from its
//     own schema (a property without one is a string);
//   - "string": str; "integer" and "number": minimum (rounded up for an
//     integer), or 1; "boolean": true; "null": null;
//   - "array": minItems samples of items (none by default);
//   - a list of types: the first that is not "null";
//   - below the top level, no type, an unknown one, a $ref or a schema
//     that is not an object: str. At the top level, a missing or invalid
//     schema gives {}: tool arguments and structured output are objects.
//
// Nesting deeper than 16 levels is cut short with str.
func sampleJSON(schema json.RawMessage, str string) string {
	var b bytes.Buffer
	sample(&b, schema, str, 0)
	return b.String()
}

type schemaNode struct {
	Type       json.RawMessage            `json:"type"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
	Enum       []json.RawMessage          `json:"enum"`
	Const      json.RawMessage            `json:"const"`
	AnyOf      []json.RawMessage          `json:"anyOf"`
	OneOf      []json.RawMessage          `json:"oneOf"`
	Items      json.RawMessage            `json:"items"`
	MinItems   int                        `json:"minItems"`
	Minimum    *float64                   `json:"minimum"`
}

func sample(b *bytes.Buffer, schema json.RawMessage, str string, depth int) {
	var n schemaNode
	if depth > 16 || len(schema) == 0 || json.Unmarshal(schema, &n) != nil {
		if depth == 0 {
			b.WriteString("{}")
			return
		}
		writeString(b, str)
		return
	}
	switch {
	case len(n.Const) > 0 && json.Valid(n.Const):
		_ = json.Compact(b, n.Const)
		return
	case len(n.Enum) > 0 && json.Valid(n.Enum[0]):
		_ = json.Compact(b, n.Enum[0])
		return
	case len(n.AnyOf) > 0:
		sample(b, n.AnyOf[0], str, depth+1)
		return
	case len(n.OneOf) > 0:
		sample(b, n.OneOf[0], str, depth+1)
		return
	}
	typ := schemaType(n.Type)
	if typ == "" && (n.Properties != nil || depth == 0) {
		typ = "object"
	}
	switch typ {
	case "object":
		b.WriteByte('{')
		seen := make(map[string]bool, len(n.Required))
		for _, name := range n.Required {
			if seen[name] {
				continue
			}
			if len(seen) > 0 {
				b.WriteByte(',')
			}
			seen[name] = true
			writeString(b, name)
			b.WriteByte(':')
			sample(b, n.Properties[name], str, depth+1)
		}
		b.WriteByte('}')
	case "integer":
		v := 1.0
		if n.Minimum != nil {
			v = math.Ceil(*n.Minimum)
		}
		b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
	case "number":
		v := 1.0
		if n.Minimum != nil {
			v = *n.Minimum
		}
		b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
	case "boolean":
		b.WriteString("true")
	case "null":
		b.WriteString("null")
	case "array":
		b.WriteByte('[')
		for i := range min(max(n.MinItems, 0), 16) {
			if i > 0 {
				b.WriteByte(',')
			}
			sample(b, n.Items, str, depth+1)
		}
		b.WriteByte(']')
	default:
		writeString(b, str)
	}
}

// schemaType reads "type": a string, or the first non-null entry of a
// list.
func schemaType(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one
	}
	var many []string
	if json.Unmarshal(raw, &many) == nil {
		for _, t := range many {
			if t != "null" {
				return t
			}
		}
		if len(many) > 0 {
			return "null"
		}
	}
	return ""
}

func writeString(b *bytes.Buffer, s string) {
	q, _ := json.Marshal(s)
	b.Write(q)
}
