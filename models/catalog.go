package models

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrNotFound is returned, possibly wrapped, by [Catalog.Get] for an id that
// is not in the catalogue.
var ErrNotFound = errors.New("models: model not found")

// A Catalog is the list of models a gateway serves. Implementations must be
// safe for concurrent use.
//
// Get returns the model with the given id, or an error wrapping
// [ErrNotFound] when there is none (the empty id included). List returns
// every model, in an order that stays the same from call to call while the
// catalogue is unchanged; GET /v1/models shows them in that order. The
// models returned belong to the caller: changing them must not change the
// catalogue. Other errors are failures of the catalogue itself (a database
// down, say): [Require] and [NewHandler] answer them with a 500.
//
// modelstest.TestCatalog checks this contract.
type Catalog interface {
	Get(ctx context.Context, id string) (*Model, error)
	List(ctx context.Context) ([]Model, error)
}

// An AllowFunc reports whether the caller of a request may use the model
// with the given id. The context is the request's, so an AllowFunc can read
// the authenticated principal from it. A nil AllowFunc allows every model.
//
// A model that is not allowed is hidden: it is left out of the lists, and
// [Require] and the single-model endpoints answer 404 model_not_found, as
// for a model that does not exist.
type AllowFunc func(ctx context.Context, id string) bool

func (f AllowFunc) allows(ctx context.Context, id string) bool {
	return f == nil || f(ctx, id)
}

// MemoryCatalog is the in-memory [Catalog]. It is safe for concurrent use.
//
// List returns the models in insertion order: the order given to
// [NewMemoryCatalog], then models added by [MemoryCatalog.Put] at the end.
// Replacing a model keeps its place. Models are copied in and out (see
// [Model.Clone]), so neither the caller's values nor the returned ones
// alias the catalogue's.
type MemoryCatalog struct {
	mu     sync.RWMutex
	models []Model        // in list order
	index  map[string]int // id → position in models
}

// NewMemoryCatalog returns a catalogue holding models, in that order. It
// panics if an id is empty or appears twice: validate lists that come from
// configuration with [ParseModels] or [ValidateModels] first, which report
// these as errors.
func NewMemoryCatalog(models ...Model) *MemoryCatalog {
	c := &MemoryCatalog{
		models: make([]Model, 0, len(models)),
		index:  make(map[string]int, len(models)),
	}
	for _, m := range models {
		if m.ID == "" {
			panic("models: NewMemoryCatalog: empty model id")
		}
		if _, dup := c.index[m.ID]; dup {
			panic(fmt.Sprintf("models: NewMemoryCatalog: duplicate model id %q", m.ID))
		}
		c.index[m.ID] = len(c.models)
		c.models = append(c.models, m.Clone())
	}
	return c
}

// Get implements [Catalog]. It returns a copy of the model, or an error
// wrapping [ErrNotFound].
func (c *MemoryCatalog) Get(_ context.Context, id string) (*Model, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, ok := c.index[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	m := c.models[i].Clone()
	return &m, nil
}

// List implements [Catalog]. It returns copies of the models in insertion
// order; the result is never nil.
func (c *MemoryCatalog) List(context.Context) ([]Model, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	list := make([]Model, len(c.models))
	for i, m := range c.models {
		list[i] = m.Clone()
	}
	return list, nil
}

// Put adds m, or replaces the model with the same id in place. It returns
// an error, and changes nothing, if m.ID is empty. Put does not validate m
// further; see [Model.Validate].
func (c *MemoryCatalog) Put(m Model) error {
	if m.ID == "" {
		return errors.New("models: MemoryCatalog.Put: empty model id")
	}
	m = m.Clone()
	c.mu.Lock()
	defer c.mu.Unlock()
	if i, ok := c.index[m.ID]; ok {
		c.models[i] = m
		return nil
	}
	c.index[m.ID] = len(c.models)
	c.models = append(c.models, m)
	return nil
}

// Delete removes the model with the given id and reports whether it was
// there. The others keep their order.
func (c *MemoryCatalog) Delete(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.index[id]
	if !ok {
		return false
	}
	c.models = slices.Delete(c.models, i, i+1)
	delete(c.index, id)
	for j := i; j < len(c.models); j++ {
		c.index[c.models[j].ID] = j
	}
	return true
}
