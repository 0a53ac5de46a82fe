// Package copies holds no code: its test checks the test helpers that
// this module's packages copy from the kit's own tests.
//
// A test of this module that moved here from package X of the kit (to
// keep a test-only dependency out of the kit's go.mod) may need helpers
// that X's remaining tests use too. Those helpers are copied, verbatim,
// into sdk/X/copied_test.go, and the test of this package fails when a
// copy is no longer the same as its original in X/*_test.go: change the
// original, then run
//
//	go test ./sdk/internal/copies -update
//
// to copy it again (the import block of copied_test.go is kept as it is).
package copies
