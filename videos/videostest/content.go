package videostest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/videos"
)

// ReadContent returns the bytes of c: its Body's, or those fetched from
// its URL with http.Get (so a store that hands out URLs must hand out
// URLs the test can reach, such as an httptest.Server's). It closes Body.
func ReadContent(t testing.TB, c *videos.Content) []byte {
	t.Helper()
	if c.Body != nil {
		defer c.Body.Close()
		b, err := io.ReadAll(c.Body)
		require.NoError(t, err)
		return b
	}
	require.NotEmpty(t, c.URL, "content has neither Body nor URL")
	u, err := url.Parse(c.URL)
	require.NoError(t, err)
	require.True(t, u.IsAbs(), "URL %q is not absolute", c.URL)
	res, err := http.Get(c.URL)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode, "GET %s", c.URL)
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return b
}

// TestContentStore checks the [videos.ContentStore] contract. newStore is
// called once per subtest and must return an empty store; subtests run
// in parallel. Content handed out as a URL is fetched with http.Get (see
// [ReadContent]).
func TestContentStore(t *testing.T, newStore func(t *testing.T) videos.ContentStore) {
	ctx := context.Background()
	setup := func(t *testing.T) videos.ContentStore {
		t.Helper()
		t.Parallel()
		return newStore(t)
	}
	put := func(t *testing.T, s videos.ContentStore, id string, v videos.Variant, ct string, data []byte) {
		t.Helper()
		require.NoError(t, s.Put(ctx, videos.PutParams{TaskID: id, Variant: v, ContentType: ct, Data: data}))
	}
	video := []byte("\x00\x00\x00\x18ftypisom not really a video")
	thumb := []byte("\x89PNG\r\n\x1a\n not really a thumbnail")

	t.Run("OpenReturnsErrNoContentIfNothingIsStored", func(t *testing.T) {
		s := setup(t)
		_, err := s.Open(ctx, videos.NewID(), videos.VariantVideo)
		require.ErrorIs(t, err, videos.ErrNoContent)
	})

	t.Run("PutThenOpenReturnsTheBytesAndType", func(t *testing.T) {
		s := setup(t)
		id := videos.NewID()
		put(t, s, id, videos.VariantVideo, "video/mp4", video)
		put(t, s, id, videos.VariantThumbnail, "image/png", thumb)
		for v, want := range map[videos.Variant][]byte{videos.VariantVideo: video, videos.VariantThumbnail: thumb} {
			c, err := s.Open(ctx, id, v)
			require.NoError(t, err, v)
			require.Equal(t, map[videos.Variant]string{videos.VariantVideo: "video/mp4", videos.VariantThumbnail: "image/png"}[v], c.ContentType)
			if c.Size != 0 {
				require.EqualValues(t, len(want), c.Size)
			}
			require.Equal(t, want, ReadContent(t, c), v)
		}
	})

	t.Run("VariantsAreStoredApart", func(t *testing.T) {
		s := setup(t)
		id := videos.NewID()
		put(t, s, id, videos.VariantVideo, "video/mp4", video)
		_, err := s.Open(ctx, id, videos.VariantThumbnail)
		require.ErrorIs(t, err, videos.ErrNoContent)
		_, err = s.Open(ctx, videos.NewID(), videos.VariantVideo)
		require.ErrorIs(t, err, videos.ErrNoContent, "another task")
	})

	t.Run("PutReplaces", func(t *testing.T) {
		s := setup(t)
		id := videos.NewID()
		put(t, s, id, videos.VariantThumbnail, "image/png", thumb)
		put(t, s, id, videos.VariantThumbnail, "image/jpeg", []byte("\xff\xd8\xff jpeg"))
		c, err := s.Open(ctx, id, videos.VariantThumbnail)
		require.NoError(t, err)
		require.Equal(t, "image/jpeg", c.ContentType)
		require.Equal(t, []byte("\xff\xd8\xff jpeg"), ReadContent(t, c))
	})

	t.Run("DeleteRemovesEveryVariant", func(t *testing.T) {
		s := setup(t)
		id, other := videos.NewID(), videos.NewID()
		put(t, s, id, videos.VariantVideo, "video/mp4", video)
		put(t, s, id, videos.VariantThumbnail, "image/png", thumb)
		put(t, s, other, videos.VariantVideo, "video/mp4", video)
		require.NoError(t, s.Delete(ctx, id))
		for _, v := range []videos.Variant{videos.VariantVideo, videos.VariantThumbnail} {
			_, err := s.Open(ctx, id, v)
			require.ErrorIs(t, err, videos.ErrNoContent, v)
		}
		c, err := s.Open(ctx, other, videos.VariantVideo)
		require.NoError(t, err)
		require.Equal(t, video, ReadContent(t, c))
		require.NoError(t, s.Delete(ctx, id), "deleting again")
		require.NoError(t, s.Delete(ctx, videos.NewID()), "deleting what was never stored")
	})

	t.Run("IDsOfAnotherFormAreNeverStored", func(t *testing.T) {
		s := setup(t)
		for _, id := range []string{"", "../etc", "task_../../x", "task_a/b", "x", "task_"} {
			err := s.Put(ctx, videos.PutParams{TaskID: id, Variant: videos.VariantVideo, ContentType: "video/mp4", Data: video})
			require.Error(t, err, "%q", id)
			_, err = s.Open(ctx, id, videos.VariantVideo)
			require.ErrorIs(t, err, videos.ErrNoContent, "%q", id)
			require.NoError(t, s.Delete(ctx, id), "%q", id)
		}
		err := s.Put(ctx, videos.PutParams{TaskID: videos.NewID(), Variant: "audio", ContentType: "video/mp4", Data: video})
		require.Error(t, err, "bad variant")
		_, err = s.Open(ctx, videos.NewID(), "audio")
		require.ErrorIs(t, err, videos.ErrNoContent)
	})

	t.Run("ConcurrentUseIsSafe", func(t *testing.T) {
		s := setup(t)
		id := videos.NewID()
		put(t, s, id, videos.VariantVideo, "video/mp4", video)
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				if i%2 == 0 {
					_ = s.Put(ctx, videos.PutParams{TaskID: id, Variant: videos.VariantVideo, ContentType: "video/mp4", Data: bytes.Clone(video)})
					return
				}
				c, err := s.Open(ctx, id, videos.VariantVideo)
				if err == nil && c.Body != nil {
					b, _ := io.ReadAll(c.Body)
					_ = c.Body.Close()
					if !bytes.Equal(b, video) {
						t.Errorf("read %q while another goroutine replaced it with the same bytes", b)
					}
				}
			})
		}
		wg.Wait()
	})
}
