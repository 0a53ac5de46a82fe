// Package jsonext keeps the JSON fields that a wire type does not model, so
// that a gateway never drops what it does not understand: a request decoded
// into a struct and encoded again carries every field the client sent.
//
// A type opts in with an Extra field, its [Codec] and two one-line
// methods:
//
//	type Request struct {
//		Model string                     `json:"model"`
//		Extra map[string]json.RawMessage `json:"-"`
//	}
//
//	var requestJSON = jsonext.NewCodec[Request]()
//
//	func (r *Request) UnmarshalJSON(b []byte) error { return requestJSON.Decode(b, r) }
//
//	func (r Request) MarshalJSON() ([]byte, error) { return requestJSON.Encode(&r) }
//
// It also holds the scanners that the hot paths read JSON with, without
// reflection: SkipValue and WalkObject over JSON already checked, the
// validating ScanString, ScanNumber and ScanValue (which accept exactly
// what json.Valid accepts), and Cursor, on which the hand decoders of
// chat requests and of the relay's upstream chunks and replies are
// built; the finding of members that an object gives twice
// (DuplicateMember, and ScanValueOnce, which also validates, for the hot
// path); the decoding of the unions that chat and responses content is
// sent as, a string or an array (StringOrArray, with Kind naming a value
// of another kind), and of the stop and prompt members, a string or an
// array of strings (Strings); and Fallback, the counter by which a hand
// decoder says that it handed a document to encoding/json.
package jsonext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// FieldSet is the set of JSON names a struct type models.
type FieldSet map[string]struct{}

// Fields returns the JSON names of T's fields (T must be a struct type).
// Compute it once, in a package-level variable.
func Fields[T any]() FieldSet {
	t := reflect.TypeFor[T]()
	set := make(FieldSet, t.NumField())
	addFields(set, t)
	return set
}

func addFields(set FieldSet, t reflect.Type) {
	structFields(t, func(name string, _ reflect.Type) { set[name] = struct{}{} })
}

// structFields calls fn with the JSON name and the type of each field of
// the struct type t that encoding/json decodes: it skips the fields
// tagged "-" and the unexported ones, and promotes the fields of
// embedded structs without a name, exported or not, as encoding/json
// does.
func structFields(t reflect.Type, fn func(name string, typ reflect.Type)) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			structFields(f.Type, fn)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fn(name, f.Type)
	}
}

// Unmarshal decodes data into v (a pointer to a type without its own
// UnmarshalJSON, usually a local alias) and returns the members of the JSON
// object that known does not name, or nil when there are none.
//
// It decodes once with encoding/json, which validates data, then scans the
// object's keys and copies only the members it keeps (see
// [UnknownMembers]): requests rarely carry unknown fields, so the usual
// cost of keeping them is one scan and no allocation.
func Unmarshal(data []byte, v any, known FieldSet) (map[string]json.RawMessage, error) {
	if err := json.Unmarshal(data, v); err != nil {
		return nil, err
	}
	return UnknownMembers(data, known)
}

// Marshal encodes v (a struct without its own MarshalJSON, usually a local
// alias) and appends the members of extra that v does not already carry,
// in key order, so the output is deterministic.
func Marshal(v any, extra map[string]json.RawMessage) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	var known map[string]json.RawMessage
	if err := json.Unmarshal(b, &known); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // drop the closing brace
	first := len(known) == 0
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		if _, dup := known[k]; dup {
			continue
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		if err := json.Compact(&buf, extra[k]); err != nil {
			return nil, fmt.Errorf("jsonext: extra field %q: %w", k, err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}
