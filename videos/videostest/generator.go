package videostest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gatewaykit/gatewaykit/models"
	"github.com/gatewaykit/gatewaykit/videos"
)

// TestGenerator checks that g keeps the contract of [videos.Generator]
// for tasks like task (a queued task of a model that g serves, with its
// request; the suite gives each call a copy with a fresh id):
//
//   - Generate returns a video: its bytes, whose content type says what
//     they are (video/mp4 bytes begin with an ftyp box), or a URL;
//   - a thumbnail, when there is one, is image/png or image/jpeg, with
//     bytes that are one, or a URL;
//   - the progress it reports is within 0 to 100;
//   - it returns once its context is cancelled;
//   - it is safe for concurrent use (run the suite with -race).
//
// Subtests run in parallel. A generator whose videos take long to make
// should be given a task (or an option of its own) that makes them fast.
func TestGenerator(t *testing.T, g videos.Generator, task videos.Task) {
	t.Helper()
	generate := func(ctx context.Context) (*videos.Result, []int, error) {
		tk := task
		tk.ID = videos.NewID()
		var (
			mu       sync.Mutex
			progress []int
		)
		res, err := g.Generate(ctx, &tk, func(p int) {
			mu.Lock()
			progress = append(progress, p)
			mu.Unlock()
		})
		mu.Lock()
		defer mu.Unlock()
		return res, progress, err
	}

	t.Run("GeneratesAVideo", func(t *testing.T) {
		t.Parallel()
		res, progress, err := generate(t.Context())
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if err := checkResult(res, progress); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("ReturnsWhenTheContextIsCancelled", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		// The go test timeout bounds the call: a generator that does not
		// watch its context hangs the suite here.
		if res, _, err := generate(ctx); err == nil {
			t.Logf("Generate returned a result (%s) for a cancelled context: the runner drops it", describe(&res.Video))
		}
	})
	t.Run("IsSafeForConcurrentUse", func(t *testing.T) {
		t.Parallel()
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				res, progress, err := generate(t.Context())
				if err == nil {
					err = checkResult(res, progress)
				}
				if err != nil {
					t.Errorf("concurrent call %d: %v", i, err)
				}
			})
		}
		wg.Wait()
	})
}

// checkResult checks a generator's result and the progress it reported.
func checkResult(res *videos.Result, progress []int) error {
	if res == nil {
		return fmt.Errorf("Generate returned a nil Result and no error")
	}
	for _, p := range progress {
		if p < 0 || p > 100 {
			return fmt.Errorf("progress %d is outside 0 to 100 (all reported: %v)", p, progress)
		}
	}
	if err := checkMedia("the video", &res.Video, "video/"); err != nil {
		return err
	}
	if res.Thumbnail != nil {
		if err := checkMedia("the thumbnail", res.Thumbnail, "image/png", "image/jpeg"); err != nil {
			return err
		}
	}
	return nil
}

// checkMedia checks that m holds bytes or a URL, with a content type that
// begins with one of types and that its bytes bear out.
func checkMedia(what string, m *videos.Media, types ...string) error {
	ok := false
	for _, t := range types {
		ok = ok || strings.HasPrefix(m.ContentType, t)
	}
	switch {
	case !ok:
		return fmt.Errorf("%s has content type %q, want %s", what, m.ContentType, strings.Join(types, " or "))
	case len(m.Data) == 0 && m.URL == "":
		return fmt.Errorf("%s has neither bytes nor a URL", what)
	case len(m.Data) > 0 && m.URL != "":
		return fmt.Errorf("%s has both bytes and a URL", what)
	case len(m.Data) == 0:
		return nil
	}
	sniffed := http.DetectContentType(m.Data)
	switch m.ContentType {
	case "video/mp4":
		if len(m.Data) < 12 || string(m.Data[4:8]) != "ftyp" {
			return fmt.Errorf("%s is video/mp4, but its bytes do not begin with an ftyp box: %q", what, m.Data[:min(len(m.Data), 12)])
		}
	case "image/png", "image/jpeg":
		if sniffed != m.ContentType {
			return fmt.Errorf("%s is %s, but its bytes are %s", what, m.ContentType, sniffed)
		}
	}
	return nil
}

func describe(m *videos.Media) string {
	if m.URL != "" {
		return m.URL
	}
	return fmt.Sprintf("%d bytes of %s", len(m.Data), m.ContentType)
}

// TaskFor returns a queued task of model m, with a fresh id, created at
// [T0], whose request m accepts: a prompt, and the first seconds and size
// m allows (4 and 720x1280 when it lists none) — a task for
// [TestGenerator].
func TaskFor(m models.Model) videos.Task {
	seconds, size := "4", "720x1280"
	if c := m.Video; c != nil {
		if len(c.Seconds) > 0 {
			seconds = strconv.Itoa(c.Seconds[0])
		}
		if len(c.Sizes) > 0 {
			size = c.Sizes[0]
		}
	}
	return videos.Task{ID: videos.NewID(), Owner: "videostest", Model: m.ID, Status: videos.StatusQueued, CreatedAt: T0(),
		Seconds: seconds, Size: size, Request: videos.Request{Create: &videos.CreateRequest{
			Model: m.ID, Prompt: "a lighthouse at dusk", Seconds: videos.Seconds(seconds), Size: size}}}
}
