// Package runner runs video tasks: a [Runner] claims the queued tasks of a
// videos.TaskStore, calls the videos.Generator (the video backend) for
// each, at most a fixed number at once, saves the progress it reports,
// puts the finished video and thumbnail in the videos.ContentStore, records
// the outcome, and settles the quota that the create handler reserved for
// the task (WithKeyStore). Several runners, in one process or several, may
// share one store: its leases keep them from running a task twice, and a
// task whose runner died is claimed again once its lease runs out.
//
// The handlers of package videos create the tasks; a Runner makes them:
//
//	tasks, contents := videos.NewMemoryStore(nil), videos.NewMemoryContentStore(nil)
//	r := runner.New(tasks, generator, contents, runner.WithKeyStore(keys))
//	videos.Register(mux, videos.NewHandler(tasks, catalog, contents, videos.WithNotify(r.Wake)))
//	go r.Run(ctx)
//
// gateway.New does this for its Config.Videos.
package runner
