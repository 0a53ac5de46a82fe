package jsonext

import (
	"encoding/json"
	"reflect"
)

// A Codec is the JSON encoding of a wire type T that keeps, in its Extra
// field (a map[string]json.RawMessage tagged `json:"-"`), the members
// of a JSON object that T does not model. T's UnmarshalJSON and
// MarshalJSON call Decode and Encode. Make it once, in a package-level
// variable, with [NewCodec]; it is safe for concurrent use.
//
// The Codec decodes and encodes through a struct type of T's fields
// without T's methods (so that encoding/json does not call them again),
// as a local `type plain T` would.
type Codec[T any] struct {
	plain reflect.Type // a pointer to the struct of T's fields, without T's methods
	known FieldSet     // the JSON names of T's fields
	extra int          // the index of T's Extra field
}

// NewCodec returns the Codec of T. It panics if T is not a struct type
// whose fields are all exported and not embedded, one of them Extra, of
// type map[string]json.RawMessage: a wire type of this module, checked
// when its package is initialised.
func NewCodec[T any]() Codec[T] {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		panic("jsonext: NewCodec: " + t.String() + " is not a struct type")
	}
	fields := make([]reflect.StructField, t.NumField())
	for i := range fields {
		f := t.Field(i)
		if !f.IsExported() || f.Anonymous {
			panic("jsonext: NewCodec: " + t.String() + "." + f.Name + " is unexported or embedded")
		}
		fields[i] = reflect.StructField{Name: f.Name, Type: f.Type, Tag: f.Tag}
	}
	f, ok := t.FieldByName("Extra")
	if !ok || f.Type != reflect.TypeFor[map[string]json.RawMessage]() {
		panic("jsonext: NewCodec: " + t.String() + " has no Extra field of type map[string]json.RawMessage")
	}
	return Codec[T]{plain: reflect.PointerTo(reflect.StructOf(fields)), known: Fields[T](), extra: f.Index[0]}
}

// Known returns the JSON names of T's fields.
func (c Codec[T]) Known() FieldSet { return c.known }

// Decode decodes data into v as [Unmarshal] does, and sets v's Extra
// field to the members of the object that T does not model (nil when
// there are none, or when decoding fails).
func (c Codec[T]) Decode(data []byte, v *T) error {
	rv := reflect.ValueOf(v)
	extra, err := Unmarshal(data, rv.Convert(c.plain).Interface(), c.known)
	rv.Elem().Field(c.extra).Set(reflect.ValueOf(extra))
	return err
}

// Encode encodes v as [Marshal] does, with the members of its Extra
// field.
func (c Codec[T]) Encode(v *T) ([]byte, error) {
	rv := reflect.ValueOf(v)
	return Marshal(rv.Convert(c.plain).Interface(), rv.Elem().Field(c.extra).Interface().(map[string]json.RawMessage))
}
