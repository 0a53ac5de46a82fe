package jsonext

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// This file finds the members that a JSON object gives twice. RFC 8259
// leaves their meaning to the parser: encoding/json keeps the last one,
// other parsers the first, or fail. A gateway that checked one value and
// forwarded a body whose upstream reads the other would check nothing, so
// the kit refuses such bodies (see package httpjson).

// DuplicateMember returns the path of the first member of the JSON value
// data whose name an earlier member of the same object already gave
// ("model", "messages[0].role", "tools[1].function.parameters.type"; an
// empty name is spelled ""), or "" when every object names each member
// once. data must be valid JSON (json.Valid, or a decoding that
// succeeded); on anything else the result is unspecified, but
// DuplicateMember never panics. It costs one pass and, below objects of
// 16 members, no allocation unless it finds a duplicate.
//
// Every object is checked, at every depth, including the values that a
// type keeps as raw JSON. t is the Go type that data is decoded into, or
// nil: in an object decoded into a struct, a name that matches one of the
// struct's JSON field names case-insensitively is that field's name, as
// encoding/json matches them ({"model":1,"MODEL":2} names model twice);
// elsewhere (maps, raw values, interfaces, a value of another kind than
// its type, such as the array of a content union) names are compared
// exactly, once unescaped.
func DuplicateMember(data []byte, t reflect.Type) string {
	var d dupFinder
	i := SkipSpace(data, 0)
	if i >= len(data) || d.value(data[i:], t) >= 0 || d.found == nil {
		return ""
	}
	slices.Reverse(d.found)
	var b strings.Builder
	for _, s := range d.found {
		switch {
		case s.name == "" && s.index >= 0:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			if s.name == "" {
				b.WriteString(`""`) // the empty name, spelled so that the path is never empty
			}
			b.WriteString(s.name)
		}
	}
	return b.String()
}

// dupField is one JSON field of a struct type: its name and its type.
type dupField struct {
	name string
	key  []byte // name's bytes, for nameSet
	typ  reflect.Type
}

// dupStep is one step of a path: a member's name, or an array index
// (name "").
type dupStep struct {
	name  string
	index int
}

// dupFinder walks a value. When it finds a duplicate, found is the path
// to it, last step first: each level adds its step as the walk unwinds,
// so that a value without duplicates costs no path at all.
type dupFinder struct {
	found []dupStep
}

// value checks the JSON value that starts data (any bytes may follow),
// of Go type t (nil: any), and returns the index just past it, or -1 for
// a duplicate (d.found is set) or malformed JSON.
func (d *dupFinder) value(data []byte, t reflect.Type) int {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if len(data) == 0 {
		return -1
	}
	switch data[0] {
	case '{':
		return d.object(data, t)
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		return d.array(data, elem)
	}
	return SkipValue(data, 0)
}

// object checks an object of type t (a struct, a map, or nil for any).
func (d *dupFinder) object(data []byte, t reflect.Type) int {
	var fields []dupField
	var elem reflect.Type
	switch {
	case t == nil:
	case t.Kind() == reflect.Struct:
		fields = fieldsOf(t)
	case t.Kind() == reflect.Map:
		elem = t.Elem()
	}
	var seen nameSet // views of data, or of fields
	i := 1
	for {
		i = SkipSpace(data, i)
		if i >= len(data) {
			return -1
		}
		switch data[i] {
		case '}':
			return i + 1
		case ',':
			i++
			continue
		}
		end := SkipString(data, i)
		if end < 0 {
			return -1
		}
		name, ok := keyName(data[i:end])
		if !ok {
			return -1
		}
		typ := elem
		if f := matchField(fields, name); f != nil {
			name, typ = f.key, f.typ
		}
		if !seen.add(name) {
			d.found = append(d.found, dupStep{name: string(name), index: -1})
			return -1
		}
		i = SkipSpace(data, end)
		if i >= len(data) || data[i] != ':' {
			return -1
		}
		i = SkipSpace(data, i+1)
		if i >= len(data) {
			return -1
		}
		n := d.value(data[i:], typ)
		if n < 0 {
			if d.found != nil {
				d.found = append(d.found, dupStep{name: string(name), index: -1})
			}
			return -1
		}
		i += n
	}
}

// nameSet is the set of the member names of one object, views of the
// caller's bytes that must not change while the set is in use: on the
// stack for the first 16 (objects are small, and comparing a few names
// beats hashing them), in a map beyond (a copy of each name), so that an
// object of many members costs linear time, not quadratic.
type nameSet struct {
	small [16][]byte
	n     int
	big   map[string]struct{}
}

// add adds name to the set, and reports false if it was there already.
func (s *nameSet) add(name []byte) bool {
	if s.big == nil {
		for _, x := range s.small[:s.n] {
			if string(x) == string(name) {
				return false
			}
		}
		if s.n < len(s.small) {
			s.small[s.n] = name
			s.n++
			return true
		}
		s.big = make(map[string]struct{}, 4*len(s.small))
		for _, x := range s.small {
			s.big[string(x)] = struct{}{}
		}
	}
	if _, dup := s.big[string(name)]; dup {
		return false
	}
	s.big[string(name)] = struct{}{}
	return true
}

// keyName returns the name that the quoted key q spells: a view of q's
// bytes when they mean themselves, else the copy that encoding/json
// decodes (escapes undone, invalid UTF-8 replaced).
func keyName(q []byte) ([]byte, bool) {
	if len(q) < 2 {
		return nil, false
	}
	if inner := q[1 : len(q)-1]; plain(inner) {
		return inner, true
	}
	s, err := Unquote(q)
	return []byte(s), err == nil
}

// matchField returns the field that encoding/json decodes a member called
// name into: the one of that name, else the first whose name folds to it.
func matchField(fields []dupField, name []byte) *dupField {
	for i := range fields {
		if fields[i].name == string(name) {
			return &fields[i]
		}
	}
	for i := range fields {
		if bytes.EqualFold(fields[i].key, name) {
			return &fields[i]
		}
	}
	return nil
}

// array checks an array whose elements are of type elem (nil: any).
func (d *dupFinder) array(data []byte, elem reflect.Type) int {
	i := 1
	for k := 0; ; k++ {
		i = SkipSpace(data, i)
		if i >= len(data) {
			return -1
		}
		if data[i] == ']' {
			return i + 1
		}
		if k > 0 {
			if data[i] != ',' {
				return -1
			}
			i = SkipSpace(data, i+1)
			if i >= len(data) {
				return -1
			}
		}
		var n int
		if c := data[i]; c == '{' || c == '[' {
			n = d.value(data[i:], elem)
			if n < 0 && d.found != nil {
				d.found = append(d.found, dupStep{index: k})
			}
		} else {
			n = SkipValue(data[i:], 0) // a scalar holds no member
		}
		if n < 0 {
			return -1
		}
		i += n
	}
}

// typeFields caches the JSON fields of each struct type that
// DuplicateMember has met ([]dupField by reflect.Type), as encoding/json
// caches its own: a type's fields never change, so the cache is only
// ever added to, and safe for concurrent use.
var typeFields sync.Map

// fieldsOf returns the JSON fields of the struct type t, as [Fields]
// finds them, with their types.
func fieldsOf(t reflect.Type) []dupField {
	if f, ok := typeFields.Load(t); ok {
		return f.([]dupField)
	}
	var list []dupField
	addDupFields(&list, t)
	f, _ := typeFields.LoadOrStore(t, list)
	return f.([]dupField)
}

func addDupFields(list *[]dupField, t reflect.Type) {
	structFields(t, func(name string, typ reflect.Type) {
		*list = append(*list, dupField{name: name, key: []byte(name), typ: typ})
	})
}
