package jsonext

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFallbackCountsAndLists(t *testing.T) {
	t.Parallel()
	f := NewFallback("jsonext.test")
	f.Add()
	f.Add()
	require.Equal(t, uint64(2), f.Count())
	var listed []uint64
	for name, n := range Fallbacks() {
		if name == "jsonext.test" {
			listed = append(listed, n)
		}
	}
	require.Equal(t, []uint64{2}, listed)
}
