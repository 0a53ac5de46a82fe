package relay

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOrderLetsOneRequestProbe: when an upstream's cool-down ends, the
// first request tries it first, and the others keep it last until that
// request's outcome is known.
func TestOrderLetsOneRequestProbe(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	hs := []*health{new(health), new(health)}
	hs[0].fail(t0, time.Second, 30*time.Second)
	require.Equal(t, []int{1, 0}, order(nil, hs, t0.Add(500*time.Millisecond)), "cooling")
	at := t0.Add(time.Second)
	require.Equal(t, []int{0, 1}, order(nil, hs, at), "the probe")
	require.Equal(t, []int{1, 0}, order(nil, hs, at), "others, while the probe runs")
	hs[0].ok()
	require.Equal(t, []int{0, 1}, order(nil, hs, at), "the probe succeeded")
	require.Equal(t, []int{0, 1}, order(nil, hs, at))

	hs[0].fail(at, time.Second, 30*time.Second)
	hs[1].fail(at, time.Second, 30*time.Second)
	hs[1].fail(at, time.Second, 30*time.Second) // 2s
	require.Equal(t, []int{0, 1}, order(nil, hs, at.Add(100*time.Millisecond)), "both cool: the one that ends first first")
}
