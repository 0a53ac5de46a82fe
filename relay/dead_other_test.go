//go:build !unix

package relay_test

import "testing"

// deadURL skips the test: a port that stays bound and refuses connections
// (dead_unix_test.go) needs a socket bound without listening, which
// package syscall offers on Unix only, and a closed listener's port may
// be given to another server of the test binary.
func deadURL(t *testing.T) string {
	t.Helper()
	t.Skip("an upstream that refuses connections is made on Unix only")
	return ""
}
