package relay

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"

	apierrors "github.com/gatewaykit/gatewaykit/errors"
	"github.com/gatewaykit/gatewaykit/internal/bytesem"
)

// TestReplyBufferHoldsWhatItReads: readAll reads a reply whole, holding
// in the bound the capacity of its buffer: the declared length at once,
// or doubling steps from 4 KiB; a reply over the largest is a 502, one
// that the bound cannot hold beside others a 503.
func TestReplyBufferHoldsWhatItReads(t *testing.T) {
	t.Parallel()
	u := &Upstream{Name: "up"}
	body := strings.Repeat("a", 10_000)
	tests := []struct {
		name   string
		body   string
		length int64 // -1: unknown
		max    int64
		taken  int64 // held by others
		held   int64 // want
		status int   // want an error of this status
	}{
		{name: "declared length", body: body, length: 10_000, max: 1 << 20, held: 10_000},
		{name: "declared length, read a byte at a time", body: body, length: 10_000, max: 1 << 20, held: 10_000},
		{name: "unknown length", body: body, length: -1, max: 1 << 20, held: 16 << 10},
		{name: "exactly the largest", body: body, length: -1, max: 10_000, held: 10_000},
		{name: "over the largest, declared", body: body, length: 10_000, max: 9_999, status: 502},
		{name: "over the largest, unknown", body: body, length: -1, max: 9_999, status: 502},
		{name: "longer than declared", body: body, length: 5_000, max: 1 << 20, held: 20_000}, // 5 000, then doubled twice
		{name: "empty, declared", body: "", length: 0, max: 1 << 20, held: 4 << 10},
		{name: "the bound held by others", body: body, length: 10_000, max: 1 << 20, taken: (1 << 20) - 9_999, status: 503},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sem := bytesem.New(1 << 20)
			require.True(t, sem.TryAcquire(tc.taken))
			rb := replyBuffer{sem: sem, max: tc.max, length: tc.length}
			r := bytes.NewReader([]byte(tc.body))
			var data []byte
			var err error
			if strings.Contains(tc.name, "a byte at a time") {
				data, err = rb.readAll(iotest.OneByteReader(r), u)
			} else {
				data, err = rb.readAll(r, u)
			}
			if tc.status != 0 {
				require.Equal(t, tc.status, apierrors.From(err).Status, "%v", err)
			} else {
				require.NoError(t, err)
				require.Equal(t, tc.body, string(data))
				require.Equal(t, tc.held, rb.held)
				require.Equal(t, tc.taken+tc.held, sem.Used())
			}
			rb.release()
			require.Equal(t, tc.taken, sem.Used(), "release gives back what it held")
		})
	}
}
