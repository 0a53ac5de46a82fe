package chat

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gatewaykit/gatewaykit/internal/jsonext"
)

// This file holds the request decoder of the hot path: one pass over the
// body, without reflection, for the usual shape of a chat request. It
// decodes what encoding/json would decode into a Request, and keeps the
// members the types do not model in the Extra maps exactly as
// [Request.decode] does (same keys, same raw bytes, nil when there are
// none).
//
// Whenever the body is anything it is not sure to decode the same way,
// it reports "not handled" and [decodeRequest] decodes the body again
// with encoding/json, which also writes the error of a bad body. It does
// not handle:
//
//   - invalid JSON, or anything after the object;
//   - a key with an escape, a control or a non-ASCII byte, or a key that
//     only matches a modelled field case-insensitively (encoding/json
//     would decode it into the field);
//   - a member given twice, at any depth (decodeRequestReflect refuses
//     it), a member that encoding/json would drop (an unknown member of
//     a type without Extra: the decoder does not track their names), and
//     a raw value (kept as sent) holding a member name with an escape or
//     invalid UTF-8 (jsonext.ScanValueOnce compares names byte for byte);
//   - a value of a kind the field cannot take (encoding/json fails), and
//     null where an element of messages, tools, tool_calls or content
//     parts is expected;
//   - an integer with a fraction, an exponent or more than 18 digits, and
//     a float that strconv.ParseFloat rejects;
//   - a tool_choice or stop that [ToolChoice.UnmarshalJSON] or
//     [Stop.UnmarshalJSON] rejects (their errors name the field);
//   - a member kept as raw JSON (an unknown member, parameters, schema)
//     nested more than 512 levels deep.
//
// FuzzDecodeRequestFast checks that, whenever it reports handled, the
// result is the one of encoding/json, Extra maps and nil-versus-empty
// slices included.
//
// The result shares no memory with the body, so that whoever owns the
// body (it reaches the relay as Params.Body) may reuse it: strings and
// raw members are copied, and a string with escapes or invalid UTF-8 is
// unquoted by [unquote] as encoding/json does. A role, type, mode or
// format that spells one of the package's constants is that constant, not
// a copy.

// decodeRequestFast decodes body into r, which must be zero, and reports
// whether it could; when it reports false, r holds a partial result that
// the caller must reset.
func decodeRequestFast(body []byte, r *Request) bool {
	d := decoder{jsonext.Cursor{Data: body}}
	d.Space()
	if !d.request(r) {
		return false
	}
	d.Space()
	return d.Pos == len(d.Data)
}

// The JSON names each type models, from its json tags: a key that folds
// to one of them but is not equal to it is left to encoding/json. A field
// added to a type without a case in its decoder below is left to
// encoding/json too, as its name then only folds.
var (
	requestNames        = fieldNames[Request]()
	messageNames        = fieldNames[Message]()
	contentPartNames    = fieldNames[ContentPart]()
	imageURLNames       = fieldNames[ImageURL]()
	toolCallNames       = fieldNames[ToolCall]()
	functionCallNames   = fieldNames[FunctionCall]()
	toolNames           = fieldNames[Tool]()
	functionDefNames    = fieldNames[FunctionDefinition]()
	toolChoiceNames     = fieldNames[toolChoiceObject]()
	toolChoiceFuncNames = []string{"name"}
	responseFormatNames = fieldNames[ResponseFormat]()
	jsonSchemaNames     = fieldNames[JSONSchema]()
	streamOptionsNames  = fieldNames[StreamOptions]()
)

func fieldNames[T any]() []string {
	return slices.Sorted(maps.Keys(jsonext.Fields[T]()))
}

// request decodes the request object.
func (d *decoder) request(r *Request) bool {
	var seen [14]bool
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "model":
			return once(&seen[0]) && d.string(&r.Model)
		case "messages":
			return once(&seen[1]) && d.messages(&r.Messages)
		case "stream":
			return once(&seen[2]) && d.bool(&r.Stream)
		case "stream_options":
			return once(&seen[3]) && d.streamOptions(&r.StreamOptions)
		case "temperature":
			return once(&seen[4]) && d.float(&r.Temperature)
		case "top_p":
			return once(&seen[5]) && d.float(&r.TopP)
		case "n":
			return once(&seen[6]) && d.int(&r.N)
		case "max_tokens":
			return once(&seen[7]) && d.int(&r.MaxTokens)
		case "max_completion_tokens":
			return once(&seen[8]) && d.int(&r.MaxCompletionTokens)
		case "stop":
			return once(&seen[9]) && d.stop(&r.Stop)
		case "tools":
			return once(&seen[10]) && d.tools(&r.Tools)
		case "tool_choice":
			return once(&seen[11]) && d.toolChoice(&r.ToolChoice)
		case "response_format":
			return once(&seen[12]) && d.responseFormat(&r.ResponseFormat)
		}
		return d.keep(&r.Extra, key, requestNames)
	})
}

// messages decodes the messages array.
func (d *decoder) messages(dst *[]Message) bool {
	if d.Null() {
		return true
	}
	list := make([]Message, 0, 4) // as encoding/json starts
	ok := d.Array(func() bool {
		list = append(list, Message{})
		return d.message(&list[len(list)-1])
	})
	*dst = list
	return ok
}

// message decodes one message.
func (d *decoder) message(m *Message) bool {
	var seen [5]bool
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "role":
			return once(&seen[0]) && d.enum(&m.Role)
		case "content":
			return once(&seen[1]) && d.content(&m.Content)
		case "name":
			return once(&seen[2]) && d.string(&m.Name)
		case "tool_calls":
			return once(&seen[3]) && d.toolCalls(&m.ToolCalls)
		case "tool_call_id":
			return once(&seen[4]) && d.string(&m.ToolCallID)
		}
		return d.keep(&m.Extra, key, messageNames)
	})
}

// content decodes a message's content as [Content.UnmarshalJSON] does: a
// string, an array of parts, null, or another kind of value, which is
// noted for validation.
func (d *decoder) content(c *Content) bool {
	switch d.Peek() {
	case '"':
		s, ok := d.str()
		c.Text = &s
		return ok
	case '[':
		parts := []ContentPart{}
		ok := d.Array(func() bool {
			parts = append(parts, ContentPart{})
			return d.contentPart(&parts[len(parts)-1])
		})
		c.Parts = parts
		return ok
	case 'n':
		return d.Null()
	}
	kind := jsonext.Kind(d.Peek())
	_, ok := d.skip()
	c.invalid = kind
	return ok
}

// contentPart decodes one part of array content.
func (d *decoder) contentPart(p *ContentPart) bool {
	var seen [3]bool
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return once(&seen[0]) && d.enum(&p.Type)
		case "text":
			return once(&seen[1]) && d.string(&p.Text)
		case "image_url":
			return once(&seen[2]) && d.imageURL(&p.ImageURL)
		}
		return d.keep(&p.Extra, key, contentPartNames)
	})
}

// imageURL decodes the image of an image_url part.
func (d *decoder) imageURL(dst **ImageURL) bool {
	if d.Null() {
		return true
	}
	u := new(ImageURL)
	*dst = u
	var seen [2]bool
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "url":
			return once(&seen[0]) && d.string(&u.URL)
		case "detail":
			return once(&seen[1]) && d.enum(&u.Detail)
		}
		return d.ignore()
	})
}

// toolCalls decodes the tool_calls of an assistant message.
func (d *decoder) toolCalls(dst *[]ToolCall) bool {
	if d.Null() {
		return true
	}
	calls := []ToolCall{}
	ok := d.Array(func() bool {
		calls = append(calls, ToolCall{})
		return d.toolCall(&calls[len(calls)-1])
	})
	*dst = calls
	return ok
}

// toolCall decodes one tool call.
func (d *decoder) toolCall(tc *ToolCall) bool {
	var seen [3]bool
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "id":
			return once(&seen[0]) && d.string(&tc.ID)
		case "type":
			return once(&seen[1]) && d.enum(&tc.Type)
		case "function":
			return once(&seen[2]) && d.functionCall(&tc.Function)
		}
		return d.ignore()
	})
}

// functionCall decodes the function of a tool call.
func (d *decoder) functionCall(f *FunctionCall) bool {
	if d.Null() {
		return true
	}
	var seen [2]bool
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return once(&seen[0]) && d.string(&f.Name)
		case "arguments":
			return once(&seen[1]) && d.string(&f.Arguments)
		}
		return d.ignore()
	})
}

// tools decodes the tools array.
func (d *decoder) tools(dst *[]Tool) bool {
	if d.Null() {
		return true
	}
	tools := []Tool{}
	ok := d.Array(func() bool {
		tools = append(tools, Tool{})
		return d.tool(&tools[len(tools)-1])
	})
	*dst = tools
	return ok
}

// tool decodes one tool.
func (d *decoder) tool(t *Tool) bool {
	var seen [2]bool
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return once(&seen[0]) && d.enum(&t.Type)
		case "function":
			return once(&seen[1]) && d.functionDefinition(&t.Function)
		}
		return d.keep(&t.Extra, key, toolNames)
	})
}

// functionDefinition decodes the function of a tool.
func (d *decoder) functionDefinition(dst **FunctionDefinition) bool {
	if d.Null() {
		return true
	}
	f := new(FunctionDefinition)
	*dst = f
	var seen [4]bool
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return once(&seen[0]) && d.string(&f.Name)
		case "description":
			return once(&seen[1]) && d.string(&f.Description)
		case "parameters":
			return once(&seen[2]) && d.raw(&f.Parameters)
		case "strict":
			return once(&seen[3]) && d.optBool(&f.Strict)
		}
		return d.ignore()
	})
}

// toolChoice decodes tool_choice: one of the three modes, or an object
// naming a function. Anything [ToolChoice.UnmarshalJSON] rejects is left
// to it.
func (d *decoder) toolChoice(dst **ToolChoice) bool {
	switch d.Peek() {
	case 'n':
		return d.Null()
	case '"':
		var mode string
		if !d.enum(&mode) {
			return false
		}
		switch mode {
		case ToolChoiceNone, ToolChoiceAuto, ToolChoiceRequired:
			*dst = &ToolChoice{Mode: mode}
			return true
		}
		return false
	}
	var typ, name string
	var seen [2]bool
	ok := d.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return once(&seen[0]) && d.enum(&typ)
		case "function":
			return once(&seen[1]) && d.toolChoiceFunction(&name)
		}
		return d.ignore()
	})
	if !ok || typ != "function" || name == "" {
		return false
	}
	*dst = &ToolChoice{Function: name}
	return true
}

// toolChoiceFunction decodes the function of a tool_choice object.
func (d *decoder) toolChoiceFunction(name *string) bool {
	var seen bool
	return d.Object(func(key []byte) bool {
		if string(key) == "name" {
			return once(&seen) && d.string(name)
		}
		return d.ignore()
	})
}

// responseFormat decodes response_format.
func (d *decoder) responseFormat(dst **ResponseFormat) bool {
	if d.Null() {
		return true
	}
	f := new(ResponseFormat)
	*dst = f
	var seen [2]bool
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "type":
			return once(&seen[0]) && d.enum(&f.Type)
		case "json_schema":
			return once(&seen[1]) && d.jsonSchema(&f.JSONSchema)
		}
		return d.ignore()
	})
}

// jsonSchema decodes the json_schema of a response format.
func (d *decoder) jsonSchema(dst **JSONSchema) bool {
	if d.Null() {
		return true
	}
	s := new(JSONSchema)
	*dst = s
	var seen [4]bool
	return d.Object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return once(&seen[0]) && d.string(&s.Name)
		case "description":
			return once(&seen[1]) && d.string(&s.Description)
		case "schema":
			return once(&seen[2]) && d.raw(&s.Schema)
		case "strict":
			return once(&seen[3]) && d.optBool(&s.Strict)
		}
		return d.ignore()
	})
}

// streamOptions decodes stream_options.
func (d *decoder) streamOptions(dst **StreamOptions) bool {
	if d.Null() {
		return true
	}
	o := new(StreamOptions)
	*dst = o
	var seen bool
	return d.Object(func(key []byte) bool {
		if string(key) == "include_usage" {
			return once(&seen) && d.bool(&o.IncludeUsage)
		}
		return d.keep(&o.Extra, key, streamOptionsNames)
	})
}

// stop decodes stop as [Stop.UnmarshalJSON] does: null, a string, or an
// array of strings (whose null elements are "").
func (d *decoder) stop(dst *Stop) bool {
	switch d.Peek() {
	case 'n':
		return d.Null()
	case '"':
		s, ok := d.str()
		*dst = Stop{s}
		return ok
	case '[':
		list := Stop{}
		ok := d.Array(func() bool {
			list = append(list, "")
			return d.string(&list[len(list)-1])
		})
		*dst = list
		return ok
	}
	return false
}

// keep adds the value at the cursor to *extra under key, as
// jsonext.KeepUnknown does for a member that known does not name. A key
// that folds to one of known, or that the object already gave, is left
// to encoding/json (and the duplicate check of decodeRequestReflect).
func (d *decoder) keep(extra *map[string]json.RawMessage, key []byte, known []string) bool {
	if foldsToAny(key, known) {
		return false
	}
	raw, ok := d.skip()
	if !ok {
		return false
	}
	if *extra == nil {
		*extra = make(map[string]json.RawMessage)
	}
	n := len(*extra)
	(*extra)[string(key)] = bytes.Clone(raw)
	return len(*extra) > n // else the key was there: a member given twice
}

// ignore reports false for a member that encoding/json would drop (one
// that a type without Extra does not model): the decoder does not track
// their names, so it leaves the body to encoding/json and the duplicate
// check of decodeRequestReflect. Such members are rare.
func (d *decoder) ignore() bool {
	return false
}

// skip moves past any value, as Skip does, and reports false for one
// that holds an object naming a member twice, which decodeRequestReflect
// refuses (or a name that it cannot compare: jsonext.ScanValueOnce).
func (d *decoder) skip() ([]byte, bool) {
	return d.SkipOnce()
}

// foldsToAny reports whether the ASCII key equals one of names
// case-insensitively, as encoding/json matches keys to fields. (Keys with
// other bytes never reach it: encoding/json also folds "ſ" to "s" and
// the Kelvin sign to "k".)
func foldsToAny(key []byte, names []string) bool {
	for _, n := range names {
		if len(n) == len(key) && asciiEqualFold(key, n) {
			return true
		}
	}
	return false
}

func asciiEqualFold(a []byte, b string) bool {
	for i := range a {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// once marks a member as seen, and reports false for a second one.
func once(seen *bool) bool {
	if *seen {
		return false
	}
	*seen = true
	return true
}

// decoder is a cursor over a JSON body, with a method per type of the
// request. Like the jsonext.Cursor methods, they decode the value at the
// cursor (white space skipped) and move past it; they report false for
// anything they do not handle, invalid JSON included, and then the cursor
// is left anywhere.
type decoder struct {
	jsonext.Cursor
}

var (
	trueLiteral  = []byte("true")
	falseLiteral = []byte("false")
)

// string decodes a string into *dst, or leaves it for null.
func (d *decoder) string(dst *string) bool {
	if d.Null() {
		return true
	}
	s, ok := d.str()
	*dst = s
	return ok
}

// enum is string for values that are usually one of the package's
// constants (roles, part and tool types, tool_choice modes, formats):
// those are not copied.
func (d *decoder) enum(dst *string) bool {
	if d.Null() {
		return true
	}
	inner, plain, ok := d.Quoted()
	if !ok {
		return false
	}
	if c, known := constant(inner); known {
		*dst = c
	} else {
		*dst = unquoted(inner, plain)
	}
	return true
}

// constant returns the constant of the package that b spells.
func constant(b []byte) (string, bool) {
	switch string(b) {
	case RoleSystem:
		return RoleSystem, true
	case RoleDeveloper:
		return RoleDeveloper, true
	case RoleUser:
		return RoleUser, true
	case RoleAssistant:
		return RoleAssistant, true
	case RoleTool:
		return RoleTool, true
	case PartText:
		return PartText, true
	case PartImageURL:
		return PartImageURL, true
	case "function":
		return "function", true
	case ToolChoiceNone:
		return ToolChoiceNone, true
	case ToolChoiceAuto:
		return ToolChoiceAuto, true
	case ToolChoiceRequired:
		return ToolChoiceRequired, true
	case FormatJSONObject:
		return FormatJSONObject, true
	case FormatJSONSchema:
		return FormatJSONSchema, true
	}
	return "", false
}

// str decodes a string, exactly as encoding/json does.
func (d *decoder) str() (string, bool) {
	inner, plain, ok := d.Quoted()
	if !ok {
		return "", false
	}
	return unquoted(inner, plain), true
}

// unquoted returns a copy of the string whose inside is b.
func unquoted(b []byte, plain bool) string {
	if plain {
		return string(b)
	}
	return unquote(b)
}

// unquote returns the string that the inside of a JSON string means,
// which jsonext.ScanString has checked, exactly as encoding/json decodes it: a
// UTF-16 surrogate that is not half of a pair, and each byte of invalid
// UTF-8, becomes U+FFFD.
func unquote(b []byte) string {
	var s strings.Builder
	s.Grow(len(b))
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '\\':
			c = b[i+1]
			i += 2
			switch c {
			case 'b':
				s.WriteByte('\b')
			case 'f':
				s.WriteByte('\f')
			case 'n':
				s.WriteByte('\n')
			case 'r':
				s.WriteByte('\r')
			case 't':
				s.WriteByte('\t')
			case 'u':
				r := hex4(b[i:])
				i += 4
				if utf16.IsSurrogate(r) {
					// The first half of a pair, or U+FFFD.
					pair := unicode.ReplacementChar
					if len(b) >= i+6 && b[i] == '\\' && b[i+1] == 'u' {
						if pair = utf16.DecodeRune(r, hex4(b[i+2:])); pair != unicode.ReplacementChar {
							i += 6
						}
					}
					r = pair
				}
				s.WriteRune(r)
			default: // '"', '\\' or '/'
				s.WriteByte(c)
			}
		case c < utf8.RuneSelf:
			s.WriteByte(c)
			i++
		default:
			r, n := utf8.DecodeRune(b[i:])
			s.WriteRune(r)
			i += n
		}
	}
	return s.String()
}

// hex4 decodes the four hex digits that jsonext.ScanString checked.
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c <= 'F':
			c -= 'A' - 10
		default:
			c -= 'a' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// bool decodes true or false into *dst, or leaves it for null.
func (d *decoder) bool(dst *bool) bool {
	switch d.Peek() {
	case 't':
		if bytes.HasPrefix(d.Data[d.Pos:], trueLiteral) {
			d.Pos += len(trueLiteral)
			*dst = true
			return true
		}
	case 'f':
		if bytes.HasPrefix(d.Data[d.Pos:], falseLiteral) {
			d.Pos += len(falseLiteral)
			*dst = false
			return true
		}
	case 'n':
		return d.Null()
	}
	return false
}

// optBool decodes true or false into a new *dst, or nil for null.
func (d *decoder) optBool(dst **bool) bool {
	if d.Null() {
		return true
	}
	b := new(bool)
	*dst = b
	return d.bool(b)
}

// int decodes an integer of at most 18 digits into a new *dst, or nil
// for null. encoding/json rejects a fraction or an exponent.
func (d *decoder) int(dst **int) bool {
	if d.Null() {
		return true
	}
	n, ok := d.Int()
	if ok {
		*dst = &n
	}
	return ok
}

// float decodes a number into a new *dst, or nil for null, with
// strconv.ParseFloat as encoding/json does.
func (d *decoder) float(dst **float64) bool {
	if d.Null() {
		return true
	}
	num, ok := d.Number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(num), 64)
	if err != nil {
		return false
	}
	*dst = &f
	return true
}

// raw decodes any value into a copy of its bytes, as json.RawMessage
// does (null is "null").
func (d *decoder) raw(dst *json.RawMessage) bool {
	raw, ok := d.skip()
	*dst = bytes.Clone(raw)
	return ok
}
