package videos_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewaykit/gatewaykit/videos"
)

// The benchmarks serve requests in memory (httptest recorders, no
// network, no auth middleware) so that they measure the handlers. Each
// has a "baseline": the least a hand-written net/http handler does for
// the same request — decode, store in a map, encode — without
// validation, model lookup or the task machinery.

const benchBody = `{"model":"first-kind","prompt":"A paper boat drifts across a pond at dawn, mist on the water, slow dolly shot.","size":"1280x720","seconds":8}`

var benchOwner = videos.WithOwner(func(context.Context) (string, bool) { return "bench", true })

// baselineTask is what the baseline keeps per task.
type baselineTask struct {
	ID, Owner, Model, Prompt, Size, Seconds, Status string
	Progress                                        int
	CreatedAt                                       int64
}

type baseline struct {
	mu    sync.RWMutex
	tasks map[string]*baselineTask
}

func newBaseline() *baseline { return &baseline{tasks: map[string]*baselineTask{}} }

func (s *baseline) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 32<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req struct {
			Model, Prompt, Size string
			Seconds             json.Number
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		t := &baselineTask{ID: "task_" + rand.Text(), Owner: "bench", Model: req.Model, Prompt: req.Prompt,
			Size: req.Size, Seconds: req.Seconds.String(), Status: "queued", CreatedAt: time.Now().Unix()}
		s.mu.Lock()
		s.tasks[t.ID] = t
		s.mu.Unlock()
		b, _ := json.Marshal(map[string]any{"id": t.ID, "status": t.Status, "progress": 0, "created_at": t.CreatedAt})
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
		return
	}
	id := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	s.mu.RLock()
	t, ok := s.tasks[id]
	s.mu.RUnlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, _ := json.Marshal(t)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

func serve(h http.Handler, method, target, contentType string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, bytes.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func newBenchHandler() (http.Handler, *videos.MemoryStore) {
	store := videos.NewMemoryStore(nil)
	return videos.NewHandler(store, testCatalog(), videos.NewMemoryContentStore(nil), benchOwner), store
}

func BenchmarkCreate(b *testing.B) {
	body := []byte(benchBody)
	form, formType := multipartBodyWith("", formField{name: "model", value: "first-kind"},
		formField{name: "prompt", value: "A paper boat drifts across a pond at dawn, mist on the water, slow dolly shot."},
		formField{name: "size", value: "1280x720"}, formField{name: "seconds", value: "8"})
	for _, bc := range []struct {
		name string
		h    func() http.Handler
		ct   string
		body []byte
	}{
		{"baseline_json", func() http.Handler { return newBaseline() }, "application/json", body},
		{"videos_json", func() http.Handler { h, _ := newBenchHandler(); return h }, "application/json", body},
		{"videos_multipart", func() http.Handler { h, _ := newBenchHandler(); return h }, formType, form},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := bc.h()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if w := serve(h, http.MethodPost, "/v1/videos", bc.ct, bc.body); w.Code != http.StatusOK {
						b.Fatalf("status %d: %s", w.Code, w.Body)
					}
				}
			})
		})
	}
}

func BenchmarkStatus(b *testing.B) {
	base := newBaseline()
	baseID := idOf(serve(base, http.MethodPost, "/v1/videos", "application/json", []byte(benchBody)))

	h, store := newBenchHandler()
	id := idOf(serve(h, http.MethodPost, "/v1/videos", "application/json", []byte(benchBody)))
	// A completed task: the largest status reply.
	ctx := context.Background()
	t, _ := store.Claim(ctx, videos.ClaimParams{Worker: "bench"})
	seed := int64(7)
	_, _ = store.Update(ctx, videos.UpdateParams{ID: t.ID, Attempt: t.Attempts, Complete: &videos.Completion{
		Metadata: videos.Metadata{Duration: 8, Width: 1280, Height: 720, FPS: 24, Seed: &seed}, HasThumbnail: true}})
	// Many other tasks in the store, as in a busy gateway.
	for range 10000 {
		serve(h, http.MethodPost, "/v1/videos", "application/json", []byte(benchBody))
		serve(base, http.MethodPost, "/v1/videos", "application/json", []byte(benchBody))
	}

	for _, bc := range []struct {
		name string
		h    http.Handler
		id   string
	}{
		{"baseline", base, baseID},
		{"videos", h, id},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if w := serve(bc.h, http.MethodGet, "/v1/videos/"+bc.id, "", nil); w.Code != http.StatusOK {
						b.Fatalf("status %d: %s", w.Code, w.Body)
					}
				}
			})
		})
	}
}

// BenchmarkStoredTaskMemory reports the heap that 100 000 stored tasks
// take: tasks created through the handler (each with its original
// request, an 80-character prompt) in the MemoryStore, against the
// baseline's map of flat structs. Run it with -benchtime=1x.
func BenchmarkStoredTaskMemory(b *testing.B) {
	const n = 100_000
	body := []byte(benchBody)
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	for _, bc := range []struct {
		name string
		h    func() (http.Handler, func() int)
	}{
		{"baseline", func() (http.Handler, func() int) {
			s := newBaseline()
			return s, func() int { return len(s.tasks) }
		}},
		{"videos", func() (http.Handler, func() int) {
			h, s := newBenchHandler()
			return h, s.Len
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				before := heap()
				h, count := bc.h()
				for range n {
					serve(h, http.MethodPost, "/v1/videos", "application/json", body)
				}
				after := heap()
				if count() != n {
					b.Fatalf("stored %d tasks", count())
				}
				runtime.KeepAlive(h)
				b.ReportMetric(float64(after-before)/(1<<20), "MiB/100k_tasks")
				b.ReportMetric(float64(after-before)/n, "B/task")
			}
		})
	}
}
