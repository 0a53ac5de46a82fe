package conversations_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/internal/golden"
)

// TestGolden walks a conversation through every route, with a response
// that continues it, and compares each reply with
// testdata/<step>.response.json after normalizing the random ids. The
// body of a step that has one is testdata/<step>.request.json, where
// "conv_*" stands for the conversation's id. Regenerate with go test
// ./conversations -update.
func TestGolden(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	id := ""
	step := func(name, method, path string, withBody bool) map[string]any {
		t.Helper()
		body := ""
		if withBody {
			b, err := os.ReadFile(golden.Path(name, ".request.json"))
			require.NoError(t, err)
			body = strings.ReplaceAll(string(b), `"conv_*"`, `"`+id+`"`)
		}
		w := g.do(t, method, path, body)
		v := ok(t, w)
		golden.JSON(t, golden.Path(name, ".response.json"), []byte(normalizeIDs(w.Body.String())))
		return v
	}

	id = step("create", http.MethodPost, "/v1/conversations", true)["id"].(string)
	base := "/v1/conversations/" + id
	step("get", http.MethodGet, base, false)
	step("update", http.MethodPost, base, true)
	first := step("add_items", http.MethodPost, base+"/items", true)["first_id"].(string)
	step("get_item", http.MethodGet, base+"/items/"+first, false)
	step("response", http.MethodPost, "/v1/responses", true)
	step("list_items", http.MethodGet, base+"/items?limit=4", false)
	step("list_items_asc", http.MethodGet, base+"/items?order=asc&limit=2&after="+first, false)
	step("delete_item", http.MethodDelete, base+"/items/"+first, false)
	step("delete", http.MethodDelete, base, false)
}
