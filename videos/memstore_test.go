package videos_test

import (
	"testing"

	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

func TestMemoryStore(t *testing.T) {
	t.Parallel()
	videostest.TestTaskStore(t, func(*testing.T) videos.TaskStore { return videos.NewMemoryStore(nil) })
}
