package videos_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentCreatePollDeleteAndRun drives the handlers and a runner
// from many goroutines at once; run with -race. Every task that is not
// deleted ends completed or failed (the #fail ones), and polling never
// sees progress go down or a status outside the four of the spec.
func TestConcurrentCreatePollDeleteAndRun(t *testing.T) {
	t.Parallel()
	b := setup(t, bundleOptions{runner: true})
	const clients, perClient = 6, 8
	var wg sync.WaitGroup
	errs := make(chan error, clients*perClient)
	for c := range clients {
		wg.Go(func() {
			key := []string{keyAlice, keyBob}[c%2]
			for i := range perClient {
				prompt := fmt.Sprintf("clip %d-%d", c, i)
				if i%4 == 3 {
					prompt += " #fail"
				}
				r := b.postJSON(t, "/v1/videos", key, map[string]any{"model": "demo-video", "prompt": prompt, "size": "1280x720", "seconds": 4})
				if r.status != http.StatusOK {
					errs <- fmt.Errorf("create: %d %s", r.status, r.body)
					continue
				}
				id := r.json(t)["id"].(string)
				if i%4 == 1 {
					if r := b.do(t, http.MethodDelete, "/v1/videos/"+id, key, "", nil); r.status != http.StatusOK {
						errs <- fmt.Errorf("delete: %d %s", r.status, r.body)
					}
					continue
				}
				last := -1.0
				for {
					m := b.do(t, http.MethodGet, "/v1/videos/"+id, key, "", nil).json(t)
					p := m["progress"].(float64)
					if p < last {
						errs <- fmt.Errorf("%s: progress went from %v to %v", id, last, p)
					}
					last = p
					st := m["status"].(string)
					if st == "completed" || st == "failed" {
						want := "completed"
						if i%4 == 3 {
							want = "failed"
						}
						if st != want {
							errs <- fmt.Errorf("%s: %s, want %s", id, st, want)
						}
						if st == "completed" {
							if r := b.do(t, http.MethodGet, "/v1/videos/"+id+"/content", key, "", nil); r.status != http.StatusOK || string(r.body[4:8]) != "ftyp" {
								errs <- fmt.Errorf("%s: content %d", id, r.status)
							}
						}
						break
					}
					if st != "queued" && st != "in_progress" {
						errs <- fmt.Errorf("%s: status %q", id, st)
						break
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	list := b.do(t, http.MethodGet, "/v1/videos?limit=100", keyAlice, "", nil).json(t)
	require.Len(t, list["data"], clients/2*perClient*3/4, "alice's tasks but the deleted ones")
}
