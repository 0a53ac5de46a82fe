package jsonext

import (
	"iter"
	"sync"
	"sync/atomic"
)

// A Fallback counts the documents that a hand decoder could not take and
// handed to encoding/json: a fast path that lacks a case says so here
// rather than slowing down in silence. Tests assert that the hot
// documents leave the count unchanged, and [Fallbacks] lists every
// counter for a metric. Counting costs one atomic add, on the slow path
// only.
type Fallback struct {
	name string
	n    atomic.Uint64
}

var fallbacks struct {
	mu   sync.Mutex
	list []*Fallback
}

// NewFallback returns the counter of the hand decoder called name
// ("relay.chatChunk"), listed by [Fallbacks]. It is for package-level
// variables: every call adds a counter.
func NewFallback(name string) *Fallback {
	f := &Fallback{name: name}
	fallbacks.mu.Lock()
	fallbacks.list = append(fallbacks.list, f)
	fallbacks.mu.Unlock()
	return f
}

// Add counts one document handed to encoding/json.
func (f *Fallback) Add() { f.n.Add(1) }

// Count returns the number of documents handed to encoding/json so far.
func (f *Fallback) Count() uint64 { return f.n.Load() }

// Fallbacks yields the name and count of every counter, in the order
// they were made.
func Fallbacks() iter.Seq2[string, uint64] {
	return func(yield func(string, uint64) bool) {
		fallbacks.mu.Lock()
		list := fallbacks.list
		fallbacks.mu.Unlock()
		for _, f := range list {
			if !yield(f.name, f.Count()) {
				return
			}
		}
	}
}
