package lru

import (
	"slices"
	"testing"
)

func ids(l *List[int]) []string {
	var out []string
	for el := l.order.Front(); el != nil; el = el.Next() {
		out = append(out, el.Value.(*Entry[int]).Key.ID)
	}
	return out
}

func TestPrune(t *testing.T) {
	for _, tc := range []struct {
		name     string
		maxN     int
		maxBytes int64
		keep     string // the entry Prune keeps, if any
		drop     string // the entry drop reports, if any
		want     []string
	}{
		{"within", -1, -1, "", "", []string{"a", "b", "c"}},
		{"count", 2, -1, "", "", []string{"b", "c"}},
		{"bytes", -1, 5, "", "", []string{"c"}},
		{"keep", 1, -1, "a", "", []string{"a"}},
		{"drop", -1, -1, "", "a", []string{"b", "c"}},
		{"drop stops at a kept entry", -1, -1, "", "b", []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New[int](tc.maxN, tc.maxBytes)
			var keep *Entry[int]
			for i, id := range []string{"a", "b", "c"} {
				e := l.Push(Key{Owner: "o", ID: id}, i, int64(i+3))
				if id == tc.keep {
					keep = e
				}
			}
			l.Prune(keep, func(e *Entry[int]) bool { return e.Key.ID == tc.drop })
			if got := ids(l); !slices.Equal(got, tc.want) {
				t.Errorf("after Prune: %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPushGrowRemove(t *testing.T) {
	l := New[int](-1, -1)
	a := l.Push(Key{"o", "a"}, 1, 10)
	l.Push(Key{"o", "b"}, 2, 20)
	l.Push(Key{"o", "a"}, 3, 5) // replaces a, to the back
	if got := ids(l); !slices.Equal(got, []string{"b", "a"}) || l.bytes != 25 || l.Len() != 2 {
		t.Fatalf("after the second Push of a: %v, %d bytes", got, l.bytes)
	}
	if e, _ := l.Get(Key{"o", "a"}); e == a || e.Value != 3 {
		t.Fatalf("Get(a) = %+v, want the new entry", e)
	}
	b, _ := l.Get(Key{"o", "b"})
	l.Grow(b, 7)
	if got := ids(l); !slices.Equal(got, []string{"a", "b"}) || l.bytes != 32 || b.Size != 27 {
		t.Fatalf("after Grow(b): %v, %d bytes, b %d", got, l.bytes, b.Size)
	}
	l.Remove(b)
	if _, ok := l.Get(Key{"o", "b"}); ok || l.bytes != 5 || l.Len() != 1 {
		t.Fatalf("after Remove(b): %d bytes, %d entries", l.bytes, l.Len())
	}
}
