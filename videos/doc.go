// Package videos implements the asynchronous video task endpoints of the
// gateway API (spec §2.5, §3.1, §4.5–§4.9): the Task type and its state
// machine, the TaskStore interface with an in-memory implementation, and
// the lease policy that keeps a task from being stuck when its worker dies.
package videos
