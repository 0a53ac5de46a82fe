package ids_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/ids"
)

func TestNew(t *testing.T) {
	t.Parallel()
	shape := regexp.MustCompile(`^chatcmpl-[A-Z2-7]{26}$`)
	seen := make(map[string]bool)
	for range 1000 {
		id := ids.New("chatcmpl-")
		require.Regexp(t, shape, id)
		require.False(t, seen[id], "duplicate id %s", id)
		seen[id] = true
	}
}

// BenchmarkNew shows an id's one allocation (two under -race, where the
// random bytes escape): the string itself, with no copy.
func BenchmarkNew(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = ids.New("chatcmpl-")
	}
}
