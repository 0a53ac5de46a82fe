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
//
// # When the stores fail
//
// A video that was generated is not failed because a store failed for a
// moment (a database that restarts): its content's Put and the update
// that records its completion are each tried up to six times, 0.5 s
// after the first failure and twice as long after each next one (about
// 15 s in all), while the runner keeps renewing the task's lease. A store
// that still fails after that fails the task ("The generated video could
// not be stored."); a completion that still cannot be recorded leaves
// the task in progress, to be claimed again (and generated again) once
// its lease runs out, which counts as one of its attempts. An error that
// another try would not mend (the task was deleted or taken over, invalid
// parameters) is not tried again.
package runner
