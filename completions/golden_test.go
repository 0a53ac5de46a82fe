package completions_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stretchr/testify/require"
)

// TestGolden runs every testdata/<case>.request.json through the handler
// (demo backend, eight tokens per chunk, fixed clock) and compares the
// reply with <case>.response.json, or the stream with <case>.stream.txt,
// after normalizing the random ids. Regenerate with
// go test ./completions -update.
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
			var req struct {
				Stream        bool
				Prompt        json.RawMessage
				N             *int
				StreamOptions *struct {
					IncludeUsage bool `json:"include_usage"`
				} `json:"stream_options"`
			}
			require.NoError(t, json.Unmarshal(body, &req))
			w := post(t, h, string(body))
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
			choices := 1
			if req.N != nil {
				choices = *req.N
			}
			var prompts []string
			if json.Unmarshal(req.Prompt, &prompts) == nil {
				choices *= len(prompts)
			}
			checkStream(t, readEvents(t, w.Body.String()), choices, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
			compareGolden(t, filepath.Join("testdata", name+".stream.txt"), got, func(s string) any {
				return readEvents(t, s)
			})
		})
	}
}

func compareGolden(t *testing.T, path, got string, decode func(string) any) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./completions -update to create it")
	if diff := cmp.Diff(decode(string(want)), decode(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}
