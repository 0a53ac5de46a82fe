// Package lru holds what the in-memory stores of packages responses and
// conversations share: entries kept by owner and id, least recently
// pushed or changed first, with their estimated size, evicted from the
// front when their number or their total size is above its bound.
package lru

import "container/list"

// A Key names an entry: the owner that scopes it and its id.
type Key struct{ Owner, ID string }

// An Entry is a value held, with its key and estimated size in bytes.
type Entry[V any] struct {
	Key   Key
	Value V
	Size  int64

	el *list.Element
}

// List holds entries, at most maxN of them and about maxBytes bytes (a
// negative bound is no bound) once pruned. It is not safe for
// concurrent use: the store that holds it locks it.
type List[V any] struct {
	maxN     int
	maxBytes int64
	order    list.List // of *Entry[V], least recently pushed or grown first
	byKey    map[Key]*Entry[V]
	bytes    int64
}

// New returns an empty List with the bounds maxN and maxBytes.
func New[V any](maxN int, maxBytes int64) *List[V] {
	return &List[V]{maxN: maxN, maxBytes: maxBytes, byKey: make(map[Key]*Entry[V])}
}

// Get returns the entry of k.
func (l *List[V]) Get(k Key) (*Entry[V], bool) {
	e, ok := l.byKey[k]
	return e, ok
}

// Push adds v under k, of size bytes, as the most recent entry, in place
// of the entry of k if there is one, and returns its entry.
func (l *List[V]) Push(k Key, v V, size int64) *Entry[V] {
	if old, ok := l.byKey[k]; ok {
		l.Remove(old)
	}
	e := &Entry[V]{Key: k, Value: v, Size: size}
	e.el = l.order.PushBack(e)
	l.byKey[k] = e
	l.bytes += size
	return e
}

// Remove removes e, an entry of l.
func (l *List[V]) Remove(e *Entry[V]) {
	l.order.Remove(e.el)
	delete(l.byKey, e.Key)
	l.bytes -= e.Size
}

// Grow records that e changed by delta bytes: it is now the most recent.
func (l *List[V]) Grow(e *Entry[V], delta int64) {
	e.Size += delta
	l.bytes += delta
	l.order.MoveToBack(e.el)
}

// Len returns the number of entries.
func (l *List[V]) Len() int { return l.order.Len() }

// Prune evicts entries from the front, the least recent first, but keep
// (nil: none): those for which drop (nil: none) reports true, and any
// while the entries are above a bound; it stops at the first entry that
// it need not evict.
func (l *List[V]) Prune(keep *Entry[V], drop func(e *Entry[V]) bool) {
	for el := l.order.Front(); el != nil; {
		e := el.Value.(*Entry[V])
		if (l.maxN < 0 || l.order.Len() <= l.maxN) && (l.maxBytes < 0 || l.bytes <= l.maxBytes) && (drop == nil || !drop(e)) {
			return
		}
		el = el.Next()
		if e != keep {
			l.Remove(e)
		}
	}
}
