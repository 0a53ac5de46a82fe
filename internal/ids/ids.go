// Package ids makes the random ids of replies and tool calls.
package ids

import (
	"crypto/rand"
	"unsafe"
)

// New returns prefix followed by 128 random bits in base32, in the
// alphabet of crypto/rand.Text (26 characters).
func New(prefix string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	var src [26]byte
	_, _ = rand.Read(src[:]) // never fails (crypto/rand)
	b := make([]byte, len(prefix)+len(src))
	n := copy(b, prefix)
	for i, c := range src {
		b[n+i] = alphabet[c&31]
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}
