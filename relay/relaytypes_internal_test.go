package relay

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/gatewaykit/gatewaykit/internal/codecdocs/relaytypes"
)

// TestRelayTypesAreCopies holds the copies of internal/codecdocs/relaytypes,
// which module bench decodes with json v2 (bench/codecs), to the types
// that the relay's hand decoders fill: the same fields, in the same order,
// with the same names, tags and types (another package's type the very
// same, a type of the relay's the same shape as its copy).
func TestRelayTypesAreCopies(t *testing.T) {
	for _, c := range []struct{ orig, copy reflect.Type }{
		{reflect.TypeFor[chatChunk](), reflect.TypeFor[relaytypes.ChatChunk]()},
		{reflect.TypeFor[chatReply](), reflect.TypeFor[relaytypes.ChatReply]()},
		{reflect.TypeFor[completionsReply](), reflect.TypeFor[relaytypes.CompletionsReply]()},
		{reflect.TypeFor[responsesEvent](), reflect.TypeFor[relaytypes.ResponsesEvent]()},
		{reflect.TypeFor[geminiEvent](), reflect.TypeFor[relaytypes.GeminiEvent]()},
	} {
		if err := sameShape(c.orig, c.copy); err != nil {
			t.Errorf("%v and %v: %v", c.orig, c.copy, err)
		}
	}
}

func TestSameShapeFails(t *testing.T) {
	type x struct {
		X int `json:"x"`
	}
	orig := reflect.TypeFor[struct {
		X int `json:"x"`
	}]()
	for _, other := range []reflect.Type{
		reflect.TypeFor[struct {
			X int `json:"y"`
		}](),
		reflect.TypeFor[struct {
			Y int `json:"x"`
		}](),
		reflect.TypeFor[struct {
			X int64 `json:"x"`
		}](),
		reflect.TypeFor[struct{}](),
		reflect.TypeFor[x](), // named, but not in relaytypes
	} {
		if sameShape(orig, other) == nil {
			t.Errorf("%v and %v have the same shape", orig, other)
		}
	}
	if err := sameShape(orig, reflect.TypeFor[struct {
		X int `json:"x"`
	}]()); err != nil {
		t.Error(err)
	}
}

// sameShape reports how orig, a type of the relay's, differs from copy:
// another package's type must be the very same; a named type of the
// relay's must have a copy named in relaytypes, of the same shape.
func sameShape(orig, copy reflect.Type) error {
	if orig == copy {
		return nil
	}
	relayPkg := reflect.TypeFor[chatChunk]().PkgPath()
	copyPkg := reflect.TypeFor[relaytypes.ChatChunk]().PkgPath()
	if orig.Kind() != copy.Kind() || (orig.Name() == "") != (copy.Name() == "") ||
		orig.Name() != "" && (orig.PkgPath() != relayPkg || copy.PkgPath() != copyPkg) {
		return fmt.Errorf("%v is not %v", copy, orig)
	}
	switch orig.Kind() {
	case reflect.Pointer, reflect.Slice:
		return sameShape(orig.Elem(), copy.Elem())
	case reflect.Struct:
		if orig.NumField() != copy.NumField() {
			return fmt.Errorf("%d fields, %d in the copy", orig.NumField(), copy.NumField())
		}
		for i := range orig.NumField() {
			f, g := orig.Field(i), copy.Field(i)
			if f.Name != g.Name || f.Tag != g.Tag || f.Anonymous != g.Anonymous {
				return fmt.Errorf("field %s %q, %s %q in the copy", f.Name, f.Tag, g.Name, g.Tag)
			}
			if err := sameShape(f.Type, g.Type); err != nil {
				return fmt.Errorf("field %s: %w", f.Name, err)
			}
		}
		return nil
	}
	return fmt.Errorf("%v is not %v", copy, orig)
}
