package responses_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// randomIDs matches the random ids of responses, items and calls.
var randomIDs = regexp.MustCompile(`"(resp_|msg_|fc_|rs_|call_|cmp_)[A-Z2-7]{26}"`)

// normalizeIDs replaces the random ids of raw reply text with "<prefix>*".
func normalizeIDs(s string) string {
	return randomIDs.ReplaceAllString(s, `"${1}*"`)
}

// TestGolden runs every testdata/<case>.request.json through the handler
// (demo backend, eight tokens per chunk, fixed clock) and compares the
// reply with <case>.response.json, or the stream with <case>.stream.txt,
// after normalizing the random ids. Cases named compact_* go to POST
// /v1/responses/compact. Regenerate with go test ./responses -update.
func TestGolden(t *testing.T) {
	t.Parallel()
	reqs, err := filepath.Glob(filepath.Join("testdata", "*.request.json"))
	require.NoError(t, err)
	require.NotEmpty(t, reqs)
	h := newTestHandler()
	for _, path := range reqs {
		name := strings.TrimSuffix(filepath.Base(path), ".request.json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			body, err := os.ReadFile(path)
			require.NoError(t, err)
			var req struct{ Stream bool }
			require.NoError(t, json.Unmarshal(body, &req))
			route := "/v1/responses"
			if strings.HasPrefix(name, "compact_") {
				route += "/compact"
			}
			w := do(t, h, http.MethodPost, route, string(body))
			require.Equal(t, 200, w.Code, w.Body.String())
			got := normalizeIDs(w.Body.String())

			if !req.Stream {
				var buf bytes.Buffer
				require.NoError(t, json.Indent(&buf, []byte(got), "", "  "))
				buf.WriteByte('\n')
				compareGolden(t, filepath.Join("testdata", name+".response.json"), buf.String(), func(s string) any {
					var v any
					require.NoError(t, json.Unmarshal([]byte(s), &v))
					return v
				})
				return
			}
			checkStream(t, readEvents(t, w.Body.String()))
			compareGolden(t, filepath.Join("testdata", name+".stream.txt"), got, func(s string) any {
				return readEvents(t, s)
			})
		})
	}
}

// compareGolden compares got with the golden file at path, both decoded
// by decode, or rewrites the file with -update.
func compareGolden(t *testing.T, path, got string, decode func(string) any) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./responses -update to create it")
	if diff := cmp.Diff(decode(string(want)), decode(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}
