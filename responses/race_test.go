package responses_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/sse"
)

// TestConcurrentConversations runs conversations of several owners at
// once on one handler and one store, streamed and not, with reads and
// deletes in between, for the race detector. The goroutines only record;
// the test goroutine checks that each conversation saw exactly its own
// earlier turn, and that every stream was well formed.
func TestConcurrentConversations(t *testing.T) {
	t.Parallel()
	h := newTestHandler()
	const goroutines, turns = 8, 5
	type turn struct {
		code   int
		body   string
		stream bool
		getOK  bool
	}
	got := make([][turns]turn, goroutines)
	deleted := make([]int, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			owner := withPrincipal(fmt.Sprint("key_", g), fmt.Sprint("acct_", g%3))
			prev := ""
			for i := range turns {
				stream := i%2 == 1
				body := fmt.Sprintf(`{"model":"demo-chat","input":"g%d turn %d","stream":%t`, g, i, stream)
				if prev != "" {
					body += `,"previous_response_id":"` + prev + `"`
				}
				w := post(t, h, body+`}`, owner)
				got[g][i] = turn{code: w.Code, body: w.Body.String(), stream: stream}
				if prev = lastResponseID(w.Body.String(), stream); prev == "" {
					return
				}
				got[g][i].getOK = do(t, h, http.MethodGet, "/v1/responses/"+prev, "", owner).Code == http.StatusOK
			}
			deleted[g] = do(t, h, http.MethodDelete, "/v1/responses/"+prev, "", owner).Code
		})
	}
	wg.Wait()

	for g := range goroutines {
		for i, tr := range got[g] {
			require.Equal(t, http.StatusOK, tr.code, "goroutine %d turn %d: %s", g, i, tr.body)
			require.True(t, tr.getOK, "goroutine %d turn %d: GET", g, i)
			var resp map[string]any
			if tr.stream {
				resp = checkStream(t, readEvents(t, tr.body))
			} else {
				resp = decode(t, tr.body)
			}
			switch i {
			case 0:
				require.NotContains(t, outputText(resp), "Earlier")
			case 1:
				require.Contains(t, outputText(resp), fmt.Sprintf(`Earlier you said: "g%d turn 0" (1 earlier message). `, g))
			default:
				require.Contains(t, outputText(resp), fmt.Sprintf(`Earlier you said: "g%d turn %d" (%d earlier messages). `, g, i-1, i))
			}
		}
		require.Equal(t, http.StatusOK, deleted[g])
	}
}

// lastResponseID returns the id of a JSON reply, or of the response of a
// stream's last event; "" if there is none.
func lastResponseID(body string, stream bool) string {
	var v struct {
		ID       string `json:"id"`
		Response struct {
			ID string `json:"id"`
		} `json:"response"`
	}
	if !stream {
		_ = json.Unmarshal([]byte(body), &v)
		return v.ID
	}
	for ev, err := range sse.Read(strings.NewReader(body)) {
		if err != nil {
			return ""
		}
		_ = json.Unmarshal([]byte(ev.Data), &v)
	}
	return v.Response.ID
}
