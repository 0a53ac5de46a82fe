package gateway

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckMembers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, json string
		wantErr    string // empty: no error
		wantOffset int64
	}{
		{"flat", `{"a":1,"b":2}`, "", 0},
		{"same name in sibling objects", `[{"a":1},{"a":2}]`, "", 0},
		{"same name at two levels", `{"a":{"a":1}}`, "", 0},
		{"scalars", `"x"`, "", 0},
		{"duplicate", `{"a":1, "a":2}`, "a: given twice", 8},
		{"duplicate in an array", `{"x":[{},{"b":1,"b":1}]}`, "x[1].b: given twice", 16},
		{"escaped names are the same name", `{"a":1,"\u0061":2}`, "a: given twice", 7},
		{"too deep", strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2), "nested more than", 0},
		{"trailing data", `{} 1`, "data after the top-level object", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := checkMembers([]byte(tc.json), nil)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
			if tc.wantOffset > 0 {
				var pe *posError
				require.ErrorAs(t, err, &pe)
				require.Equal(t, tc.wantOffset, pe.offset)
			}
		})
	}
}

func TestPosition(t *testing.T) {
	t.Parallel()
	b := []byte("ab\ncd\n\nef")
	for _, tc := range []struct {
		off       int64
		line, col int
	}{{0, 1, 1}, {1, 1, 2}, {3, 2, 1}, {4, 2, 2}, {7, 4, 1}, {99, 4, 3}, {-1, 1, 1}} {
		line, col := position(b, tc.off)
		require.Equal(t, [2]int{tc.line, tc.col}, [2]int{line, col}, "offset %d", tc.off)
	}
}

// FuzzCheckMembers: on any valid JSON the walk ends, without a panic, and
// finds a duplicate only where there is one.
func FuzzCheckMembers(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `[{"a":[{"b":{}}]}]`, `{"keys":[{"secret":"sk-a"}]}`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) {
			return
		}
		err := checkMembers(b, nil)
		if err == nil || strings.Contains(err.Error(), "nested more than") {
			return
		}
		require.Contains(t, err.Error(), "given twice")
	})
}
