// Package ids makes the random ids of replies and tool calls.
package ids

import (
	"crypto/rand"
	"strings"
)

// New returns prefix followed by 128 random bits in base32, in the
// alphabet of crypto/rand.Text (26 characters).
func New(prefix string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	var src [26]byte
	_, _ = rand.Read(src[:]) // never fails (crypto/rand)
	var b strings.Builder    // one allocation, no copy
	b.Grow(len(prefix) + len(src))
	b.WriteString(prefix)
	for _, c := range src {
		b.WriteByte(alphabet[c&31])
	}
	return b.String()
}
