package videos_test

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

func TestMemoryContentStore(t *testing.T) {
	t.Parallel()
	videostest.TestContentStore(t, func(*testing.T) videos.ContentStore { return videos.NewMemoryContentStore(nil) })
}

func TestFileStore(t *testing.T) {
	t.Parallel()
	videostest.TestContentStore(t, func(t *testing.T) videos.ContentStore {
		s, err := videos.NewFileStore(t.TempDir())
		require.NoError(t, err)
		return s
	})
}

func TestURLStore(t *testing.T) {
	t.Parallel()
	videostest.TestContentStore(t, func(t *testing.T) videos.ContentStore {
		dir := t.TempDir()
		cdn := httptest.NewServer(http.StripPrefix("/media/", http.FileServer(http.Dir(dir))))
		t.Cleanup(cdn.Close)
		s, err := videos.NewURLStore(dir, cdn.URL+"/media/")
		require.NoError(t, err)
		return s
	})
}

func TestFileStoreRefusesUnknownContentTypes(t *testing.T) {
	t.Parallel()
	s, err := videos.NewFileStore(t.TempDir())
	require.NoError(t, err)
	err = s.Put(t.Context(), videos.PutParams{TaskID: videos.NewID(), Variant: videos.VariantVideo, ContentType: "application/x-thing", Data: []byte("x")})
	require.ErrorIs(t, err, videos.ErrInvalidParams)
}

func TestFileStoreLayoutAndNoLeftoverTempFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := videos.NewFileStore(dir)
	require.NoError(t, err)
	id := videos.NewID()
	require.NoError(t, s.Put(t.Context(), videos.PutParams{TaskID: id, Variant: videos.VariantThumbnail, ContentType: "image/png", Data: []byte("png")}))
	require.NoError(t, s.Put(t.Context(), videos.PutParams{TaskID: id, Variant: videos.VariantThumbnail, ContentType: "image/jpeg", Data: []byte("jpg")}))
	entries, err := os.ReadDir(filepath.Join(dir, id))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"thumbnail.jpg"}, names)
}

func TestURLStoreURLs(t *testing.T) {
	t.Parallel()
	s, err := videos.NewURLStore(t.TempDir(), "https://cdn.example.com/videos/")
	require.NoError(t, err)
	id := videos.NewID()
	require.NoError(t, s.Put(t.Context(), videos.PutParams{TaskID: id, Variant: videos.VariantVideo, ContentType: "video/mp4", Data: []byte("mp4")}))
	c, err := s.Open(t.Context(), id, videos.VariantVideo)
	require.NoError(t, err)
	require.Nil(t, c.Body)
	require.Equal(t, "https://cdn.example.com/videos/"+id+"/video.mp4", c.URL)

	for _, bad := range []string{"", "/relative", "ftp://x/y", "https://"} {
		_, err := videos.NewURLStore(t.TempDir(), bad)
		require.Error(t, err, bad)
		require.True(t, strings.HasPrefix(err.Error(), "videos: "), err.Error())
	}
}
