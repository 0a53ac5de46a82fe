package bytesem_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/bytesem"
)

func TestSem(t *testing.T) {
	t.Parallel()
	s := bytesem.New(10)
	require.Equal(t, int64(10), s.Max())
	require.True(t, s.TryAcquire(6))
	require.False(t, s.TryAcquire(5), "6 + 5 > 10: refused, and nothing taken")
	require.True(t, s.TryAcquire(4))
	require.Equal(t, int64(10), s.Used())
	s.Release(6)
	require.True(t, s.TryAcquire(6))
	s.Release(10)
	require.Zero(t, s.Used())
}

func TestNilSemBoundsNothing(t *testing.T) {
	t.Parallel()
	for _, max := range []int64{0, -1} {
		s := bytesem.New(max)
		require.Nil(t, s)
		require.Equal(t, int64(-1), s.Max())
		require.True(t, s.TryAcquire(1<<62))
		s.Release(1 << 62)
		require.Zero(t, s.Used())
	}
}

func TestSemUnderConcurrency(t *testing.T) {
	t.Parallel()
	s := bytesem.New(100)
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for range 100 {
				if s.TryAcquire(7) {
					s.Release(7)
				}
			}
		})
	}
	wg.Wait()
	require.Zero(t, s.Used())
}
