package runner_test

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/gatewaykit/gatewaykit/demo"
	"github.com/gatewaykit/gatewaykit/videos"
	"github.com/gatewaykit/gatewaykit/videos/runner"
	"github.com/gatewaykit/gatewaykit/videos/videostest"
)

func ExampleNew() {
	tasks, contents := videos.NewMemoryStore(nil), videos.NewMemoryContentStore(nil)
	r := runner.New(tasks, demo.NewVideoGenerator(demo.WithVideoDuration(0)), contents, runner.WithWorkers(2))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = r.Run(ctx) }()

	// A queued task, as the create handler of package videos stores it
	// (which then calls r.Wake through videos.WithNotify).
	task := videostest.TaskFor(demo.VideoModels()[0])
	if err := tasks.Create(ctx, &task); err != nil {
		fmt.Println(err)
		return
	}
	r.Wake()

	t, _ := tasks.Get(ctx, task.Owner, task.ID)
	for !t.Status.Terminal() {
		time.Sleep(time.Millisecond)
		t, _ = tasks.Get(ctx, task.Owner, task.ID)
	}
	fmt.Println(t.Status, t.Progress, t.HasThumbnail)

	c, err := contents.Open(ctx, task.ID, videos.VariantVideo)
	if err != nil {
		fmt.Println(err)
		return
	}
	head := make([]byte, 8)
	_, _ = io.ReadFull(c.Body, head)
	_ = c.Body.Close()
	fmt.Println(c.ContentType, string(head[4:]))

	shutdown, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	fmt.Println(r.Shutdown(shutdown))
	// Output:
	// completed 100 true
	// video/mp4 ftyp
	// <nil>
}
