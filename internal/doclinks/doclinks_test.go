package doclinks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDocLinksResolve: every doc link of these packages resolves. (Not
// yet every package of the module: see Broken's results for the others.)
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{
		"admin", "auth", "auth/authtest", "gateway", "gateway/gatewaytest", "internal/bytesem",
		"internal/doclinks", "relay", "responses/fromchat", "videos", "videos/runner",
	} {
		links, err := Broken(filepath.Join("../..", dir))
		require.NoError(t, err)
		for _, l := range links {
			t.Errorf("%s: doc link %s does not resolve", l.Pos, l.Link)
		}
	}
}

// TestBrokenFindsWhatGoDocDoesNotLink: the cases of the finder itself.
func TestBrokenFindsWhatGoDocDoesNotLink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `// Package p is a package: [Thing], [Thing.M] and [strings.Cut] link,
// [Missing] does not, [Thing]s does not either, and neither [DONE] nor
// b[i] nor [redacted] is a link; [helper] is for readers of the source.
package p

import "strings"

// Thing is a type; see [Gone].
type Thing struct {
	// F is a field; see [Thing.Nope].
	F int
}

// M is a method.
func (Thing) M() { _ = strings.Cut }

func helper() {}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o600))
	links, err := Broken(dir)
	require.NoError(t, err)
	var got []string
	for _, l := range links {
		got = append(got, l.Link)
	}
	require.ElementsMatch(t, []string{"[Missing]", "[Thing]", "[Gone]", "[Thing.Nope]"}, got)
}
