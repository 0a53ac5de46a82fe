// Package golden holds the golden-file helpers of the packages' tests:
// the request bodies under testdata/, the comparison of a reply with its
// golden file, and the -update flag that rewrites the files instead
// (go test ./PKG -update).
//
// A case is a file testdata/<case>.request.json; its golden files are
// testdata/<case><suffix>, the suffix naming the form of the reply
// (".response.json", ".stream.txt", …).
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// Update is the -update flag of the tests that import this package:
// rewrite the golden files instead of comparing with them.
var Update = flag.Bool("update", false, "update the golden files under testdata/")

// requestSuffix ends the name of a case's request file.
const requestSuffix = ".request.json"

// A Request is the request of a golden case.
type Request struct {
	Name string // the case: the file's name without .request.json
	Body []byte // the file's content
}

// Requests returns the requests of the cases under testdata/, in the
// order of their file names. It fails t when there is none.
func Requests(t testing.TB) []Request {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*"+requestSuffix))
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	reqs := make([]Request, 0, len(paths))
	for _, path := range paths {
		body, err := os.ReadFile(path)
		require.NoError(t, err)
		reqs = append(reqs, Request{Name: strings.TrimSuffix(filepath.Base(path), requestSuffix), Body: body})
	}
	return reqs
}

// Run calls f with the name and the body of every case of [Requests],
// each in a parallel subtest named after its case.
func Run(t *testing.T, f func(t *testing.T, name string, body []byte)) {
	t.Helper()
	for _, req := range Requests(t) {
		t.Run(req.Name, func(t *testing.T) {
			t.Parallel()
			f(t, req.Name, req.Body)
		})
	}
}

// Seed adds the body of every case of [Requests] to the seed corpus of
// f, a fuzz target of one []byte argument.
func Seed(f *testing.F) {
	f.Helper()
	for _, req := range Requests(f) {
		f.Add(req.Body)
	}
}

// Path is the golden file of case name whose name ends with suffix:
// testdata/<name><suffix>.
func Path(name, suffix string) string {
	return filepath.Join("testdata", name+suffix)
}

// NormalizeIDs returns a function that replaces the random ids in a
// reply's text, in quotes, with "<prefix>*": an id is one of prefixes
// followed by 26 characters of base32 (A-Z, 2-7).
func NormalizeIDs(prefixes ...string) func(string) string {
	quoted := make([]string, len(prefixes))
	for i, p := range prefixes {
		quoted[i] = regexp.QuoteMeta(p)
	}
	ids := regexp.MustCompile(`"(` + strings.Join(quoted, "|") + `)[A-Z2-7]{26}"`)
	return func(s string) string { return ids.ReplaceAllString(s, `"${1}*"`) }
}

// Compare compares got with the golden file at path, both decoded by
// decode, and reports their difference (-want +got); with -update it
// writes got to the file instead.
func Compare(t *testing.T, path, got string, decode func(string) any) {
	t.Helper()
	if *Update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test with -update to create it")
	if diff := cmp.Diff(decode(string(want)), decode(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// Reply compares the reply got of case name with its golden file,
// testdata/<name>.stream.txt for a stream, both decoded by decodeStream,
// and testdata/<name>.response.json, as JSON, otherwise.
func Reply(t *testing.T, name, got string, stream bool, decodeStream func(string) any) {
	t.Helper()
	if stream {
		Compare(t, Path(name, ".stream.txt"), got, decodeStream)
		return
	}
	JSON(t, Path(name, ".response.json"), []byte(got))
}

// JSON compares the JSON text got with the golden file at path as JSON
// values, like [Compare]; the file holds got indented by two spaces,
// with a final newline.
func JSON(t *testing.T, path string, got []byte) {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, json.Indent(&buf, got, "", "  "), "%s", got)
	buf.WriteByte('\n')
	Compare(t, path, buf.String(), DecodeJSON(t))
}

// DecodeJSON returns a decode function for [Compare] that decodes a JSON
// text into a generic value, failing t when it is not JSON.
func DecodeJSON(t testing.TB) func(string) any {
	return func(s string) any {
		var v any
		require.NoError(t, json.Unmarshal([]byte(s), &v), s)
		return v
	}
}
