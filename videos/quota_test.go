package videos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
)

// settleSignal is a key store that reports every Settle.
type settleSignal struct {
	*auth.MemoryKeyStore
	settled chan auth.SettleParams
}

func (s settleSignal) Settle(ctx context.Context, p auth.SettleParams) (auth.Quota, error) {
	q, err := s.MemoryKeyStore.Settle(ctx, p)
	s.settled <- p
	return q, err
}

// quotaBundle serves the video routes behind auth.Middleware with one key,
// priced at 100 units a second of modelFirstKind and modelT2VOnly; run
// starts a runner
// over gen.
type quotaBundle struct {
	keys   settleSignal
	secret string
	store  *videos.MemoryStore
	srv    *httptest.Server
	run    func(gen videos.Generator)
}

func newQuotaBundle(t *testing.T, budget int64) *quotaBundle {
	t.Helper()
	b := &quotaBundle{
		keys:  settleSignal{auth.NewMemoryKeyStore(), make(chan auth.SettleParams, 16)},
		store: videos.NewMemoryStore(nil),
	}
	var err error
	b.secret, err = auth.NewSecret()
	require.NoError(t, err)
	require.NoError(t, b.keys.Add(t.Context(), b.secret, auth.Key{ID: "key_q", Owner: "acme", Quota: auth.LimitedQuota(budget)}))
	contents := videos.NewMemoryContentStore(nil)
	var wake func()
	h := videos.NewHandler(b.store, testCatalog(), contents,
		videos.WithNotify(func() {
			if wake != nil {
				wake()
			}
		}),
		videos.WithPricing(func(model string) int64 {
			if model == modelFirstKind || model == modelT2VOnly {
				return 100
			}
			return 0
		}))
	mux := http.NewServeMux()
	videos.Register(mux, auth.Middleware(b.keys)(h))
	b.srv = httptest.NewServer(mux)
	t.Cleanup(b.srv.Close)
	b.run = func(gen videos.Generator) {
		r := runner.New(b.store, gen, contents, runner.WithKeyStore(b.keys), runner.WithPollInterval(time.Hour))
		wake = r.Wake
		go func() { _ = r.Run(context.Background()) }()
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = r.Shutdown(ctx)
		})
	}
	return b
}

// create creates a video on path: 8 seconds of modelFirstKind, or on the
// multimodal path 10 seconds of modelT2VOnly.
func (b *quotaBundle) create(t *testing.T, path string) (int, []byte) {
	t.Helper()
	var body string
	if strings.Contains(path, "vendorai") {
		body = fmt.Sprintf(`{"model":%q,"mode":"t2v","prompt":"a lighthouse","duration_sec":10}`, modelT2VOnly)
	} else {
		body = fmt.Sprintf(`{"model":%q,"prompt":"a lighthouse","seconds":"8","size":"1280x720"}`, modelFirstKind)
	}
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+b.secret)
	res, err := b.srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, data
}

func (b *quotaBundle) quota(t *testing.T) auth.Quota {
	t.Helper()
	k, err := b.keys.Lookup(context.Background(), b.secret)
	require.NoError(t, err)
	return k.Quota
}

func taskID(t *testing.T, body []byte) string {
	t.Helper()
	var v struct{ ID string }
	require.NoError(t, json.Unmarshal(body, &v), "%s", body)
	require.NotEmpty(t, v.ID, "%s", body)
	return v.ID
}

func TestVideoTasksAreCharged(t *testing.T) {
	t.Parallel()
	const cost = 8 * 100 // 8 seconds at 100 a second

	t.Run("CreationReservesAndCompletionCharges", func(t *testing.T) {
		t.Parallel()
		b := newQuotaBundle(t, 10_000)
		status, body := b.create(t, "/v1/videos")
		require.Equal(t, http.StatusOK, status, "%s", body)
		id := taskID(t, body)
		require.Equal(t, auth.Quota{Remaining: 10_000, Reserved: cost}, b.quota(t))
		task, err := b.store.Get(context.Background(), "owner:acme", id)
		require.NoError(t, err)
		require.Equal(t, &videos.TaskCharge{KeyID: "key_q", Amount: cost, CostUSD: 8 * 0.05}, task.Charge)

		b.run(videos.GeneratorFunc(func(context.Context, *videos.Task, func(int)) (*videos.Result, error) {
			return okResult(), nil
		}))
		require.Equal(t, auth.SettleParams{KeyID: "key_q", Reserved: cost, Used: cost, Model: modelFirstKind, CostUSD: 8 * 0.05},
			wait(t, b.keys.settled), "the settlement records the task, at its price in US dollars")
		require.Equal(t, auth.Quota{Remaining: 10_000 - cost, Used: cost, CostUSD: 8 * 0.05}, b.quota(t))
		rows, err := b.keys.Usage(context.Background(), auth.UsageParams{KeyID: "key_q", GroupBy: auth.GroupByModel})
		require.NoError(t, err)
		require.Equal(t, []auth.UsageRow{{Model: modelFirstKind, Requests: 1, CostUSD: 8 * 0.05}}, rows)
	})

	t.Run("AKeyThatItsTaskExhaustedStillGetsTheVideo", func(t *testing.T) {
		t.Parallel()
		b := newQuotaBundle(t, cost) // the task takes the whole budget
		status, body := b.create(t, "/v1/videos")
		require.Equal(t, http.StatusOK, status, "%s", body)
		id := taskID(t, body)
		b.run(videos.GeneratorFunc(func(context.Context, *videos.Task, func(int)) (*videos.Result, error) {
			return okResult(), nil
		}))
		wait(t, b.keys.settled)
		require.True(t, b.quota(t).Exhausted())

		get := func(path string) (int, []byte) {
			req, err := http.NewRequest(http.MethodGet, b.srv.URL+path, nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+b.secret)
			res, err := b.srv.Client().Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			data, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			return res.StatusCode, data
		}
		status, body = get("/v1/videos/" + id)
		require.Equal(t, http.StatusOK, status, "%s", body)
		require.Contains(t, string(body), `"status":"completed"`)
		status, body = get("/v1/videos/" + id + "/content")
		require.Equal(t, http.StatusOK, status, "%s", body)
		require.Equal(t, "mp4 bytes", string(body), "the video it paid for")
		status, body = b.create(t, "/v1/videos")
		require.Equal(t, http.StatusForbidden, status, "%s", body)
		require.Contains(t, string(body), `"code":"insufficient_quota"`, "but it creates no more")
	})

	t.Run("AFailedTaskIsRefunded", func(t *testing.T) {
		t.Parallel()
		b := newQuotaBundle(t, 10_000)
		status, body := b.create(t, "/v1/videos")
		require.Equal(t, http.StatusOK, status, "%s", body)
		b.run(videos.GeneratorFunc(func(context.Context, *videos.Task, func(int)) (*videos.Result, error) {
			return nil, errors.New("the GPU caught fire")
		}))
		require.Equal(t, auth.SettleParams{KeyID: "key_q", Reserved: cost, Model: modelFirstKind}, wait(t, b.keys.settled),
			"a failed task is recorded at no cost")
		require.Equal(t, auth.LimitedQuota(10_000), b.quota(t))
	})

	t.Run("ATaskDeletedBeforeItRunsIsRefunded", func(t *testing.T) {
		t.Parallel()
		b := newQuotaBundle(t, 10_000)
		status, body := b.create(t, "/v1/videos")
		require.Equal(t, http.StatusOK, status, "%s", body)
		req, err := http.NewRequest(http.MethodDelete, b.srv.URL+"/v1/videos/"+taskID(t, body), nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+b.secret)
		res, err := b.srv.Client().Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, auth.LimitedQuota(10_000), b.quota(t))
	})

	t.Run("AFreeModelIsNotCharged", func(t *testing.T) {
		t.Parallel()
		b := newQuotaBundle(t, 1)
		req, err := http.NewRequest(http.MethodPost, b.srv.URL+"/v1/videos",
			strings.NewReader(fmt.Sprintf(`{"model":%q,"prompt":"a lighthouse"}`, modelMulti)))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+b.secret)
		res, err := b.srv.Client().Do(req)
		require.NoError(t, err)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode)
		require.Equal(t, auth.LimitedQuota(1), b.quota(t))
	})
}

// TestATinyBudgetCannotGenerateWithoutEnd reproduces a key that generated
// videos without end, since nothing charged them: 10 concurrent creations
// on a key with 1 unit left. The first reserves a whole video and the
// others find nothing unreserved: 403 insufficient_quota in the flat
// shape of the create routes.
func TestATinyBudgetCannotGenerateWithoutEnd(t *testing.T) {
	t.Parallel()
	for path, cost := range map[string]int64{"/v1/videos": 800, "/v1/vendorai/videos": 1000} {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			b := newQuotaBundle(t, 1)
			type result struct {
				status int
				body   []byte
			}
			results := make(chan result, 10)
			var wg sync.WaitGroup
			for range 10 {
				wg.Go(func() {
					status, body := b.create(t, path)
					results <- result{status, body}
				})
			}
			wg.Wait()
			close(results)
			created := 0
			for res := range results {
				if res.status == http.StatusOK {
					created++
					continue
				}
				require.Equal(t, http.StatusForbidden, res.status, "%s", res.body)
				var flat struct {
					Code, Message string
					Error         struct{ Code, Message string }
				}
				require.NoError(t, json.Unmarshal(res.body, &flat), "%s", res.body)
				require.Equal(t, "insufficient_quota", flat.Code)
				require.Equal(t, "insufficient_quota", flat.Error.Code)
				require.NotEmpty(t, flat.Message)
			}
			require.Equal(t, 1, created, "videos created on a key with 1 unit left")
			require.Equal(t, auth.Quota{Remaining: 1, Reserved: cost}, b.quota(t))
		})
	}
}
