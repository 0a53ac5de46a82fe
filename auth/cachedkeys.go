package auth

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultKeyCacheTTL is a staleness bound for [NewCachedKeyStore] that
// suits most gateways: a key disabled, expired or changed in the
// underlying store is seen within 5 seconds.
const DefaultKeyCacheTTL = 5 * time.Second

// CachedKeyStore is a [KeyStore] that serves Lookup from memory, in front
// of a KeyStore that is slower to ask (a database). Create it with
// [NewCachedKeyStore]. It is safe for concurrent use.
//
// # Staleness bound
//
// A key found by Lookup is kept, by the hash of its secret, for the TTL
// given to NewCachedKeyStore, then asked for again; so is a key found by
// LookupID, by its id (the lookup of [Identities]). So a change made to
// the underlying store by anything but this CachedKeyStore (a key
// disabled, expired, deleted, given a new secret, limit or budget, or
// spent by another process) is seen by Lookup and LookupID within the
// TTL at most: a disabled key stops working within the TTL. GetKey, the
// read of an admin API, is never cached. Reserve and Settle are
// passed through to the underlying store, which stays the one authority
// on quota (an exhausted budget is refused by Reserve at once); the
// quota of a cached key is kept up to date with the Reserve and Settle
// calls made through the cache, so Lookup reports what they did at once.
// Secrets and ids that find no key are not cached: a new key works at
// once.
//
// It keeps only the SHA-256 of each secret, and holds at most one entry
// per key found, dropped once its TTL has passed.
type CachedKeyStore struct {
	keys KeyStore
	ttl  time.Duration
	now  func() time.Time

	mu        sync.Mutex
	byHash    map[[sha256.Size]byte]*cachedKey
	byID      map[string]*cachedKey
	seq       uint64            // counts changes made through the cache
	changed   map[string]uint64 // the seq of the last change of a key id
	misses    int               // Lookups asking the underlying store
	lastSweep time.Time
}

type cachedKey struct {
	hash    [sha256.Size]byte
	hashed  bool // found by its secret, whose hash is hash (else by its id)
	key     *Key
	expires time.Time
}

// NewCachedKeyStore returns a [CachedKeyStore] in front of keys that
// keeps each key found for ttl ([DefaultKeyCacheTTL] suits most
// gateways). It panics if keys is nil or ttl is not positive.
func NewCachedKeyStore(keys KeyStore, ttl time.Duration) *CachedKeyStore {
	switch {
	case keys == nil:
		panic("auth: NewCachedKeyStore: nil KeyStore")
	case ttl <= 0:
		panic("auth: NewCachedKeyStore: ttl must be positive")
	}
	return &CachedKeyStore{
		keys:    keys,
		ttl:     ttl,
		now:     time.Now,
		byHash:  make(map[[sha256.Size]byte]*cachedKey),
		byID:    make(map[string]*cachedKey),
		changed: make(map[string]uint64),
	}
}

// Lookup implements [KeyStore]: from memory if the key was found within
// the TTL, else from the underlying store.
func (c *CachedKeyStore) Lookup(ctx context.Context, secret string) (*Key, error) {
	h := sha256.Sum256([]byte(secret))
	now := c.now()
	c.mu.Lock()
	k, start := c.hitLocked(c.byHash[h], now)
	if k != nil {
		return k, nil
	}
	k, err := c.keys.Lookup(ctx, secret)
	return c.keep(k, err, start, now, &cachedKey{hash: h, hashed: true})
}

// LookupID implements [IDLookup]: from memory if the key was found, by
// its id or its secret, within the TTL, else from the underlying store,
// or an error wrapping [ErrUnsupported] if that is no IDLookup.
func (c *CachedKeyStore) LookupID(ctx context.Context, id string) (*Key, error) {
	ids, ok := c.keys.(IDLookup)
	if !ok {
		return nil, fmt.Errorf("auth: CachedKeyStore.LookupID: %w", ErrUnsupported)
	}
	now := c.now()
	c.mu.Lock()
	k, start := c.hitLocked(c.byID[id], now)
	if k != nil {
		return k, nil
	}
	k, err := ids.LookupID(ctx, id)
	return c.keep(k, err, start, now, &cachedKey{})
}

// hitLocked returns a copy of the key of e, if e is set and fresh at
// now; else it counts a miss and returns the number of the last change,
// at which the lookup starts. c.mu is held on entry and released on
// return.
func (c *CachedKeyStore) hitLocked(e *cachedKey, now time.Time) (*Key, uint64) {
	defer c.mu.Unlock()
	if e != nil && now.Before(e.expires) {
		return e.key.Clone(), 0
	}
	c.misses++
	return nil, c.seq
}

// keep ends a lookup that missed the cache at now, when the last change
// was start: it caches e for k, the key found (unless err), and returns k
// and err.
func (c *CachedKeyStore) keep(k *Key, err error, start uint64, now time.Time, e *cachedKey) (*Key, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.misses--
	if err != nil || k == nil {
		return k, err
	}
	// A Reserve or Settle of this key that ended while the underlying
	// store was asked may or may not be in k: keep k out of the cache.
	if c.changed[k.ID] <= start {
		c.sweepLocked(now)
		c.forgetLocked(k.ID)
		e.key, e.expires = k.Clone(), now.Add(c.ttl)
		if e.hashed {
			c.byHash[e.hash] = e
		}
		c.byID[k.ID] = e
	}
	return k, nil
}

// sweepLocked drops the entries past their TTL, at most once per TTL.
func (c *CachedKeyStore) sweepLocked(now time.Time) {
	if now.Sub(c.lastSweep) < c.ttl {
		return
	}
	c.lastSweep = now
	for id, e := range c.byID {
		if !now.Before(e.expires) {
			c.forgetLocked(id)
		}
	}
	if c.misses == 0 {
		clear(c.changed)
	}
}

// changeLocked records a change of the key with id keyID made through the
// cache, and returns its entry, if any.
func (c *CachedKeyStore) changeLocked(keyID string) *cachedKey {
	c.seq++
	c.changed[keyID] = c.seq
	return c.byID[keyID]
}

// forgetLocked drops the entry of the key with id keyID.
func (c *CachedKeyStore) forgetLocked(keyID string) {
	if e, ok := c.byID[keyID]; ok {
		if e.hashed {
			delete(c.byHash, e.hash)
		}
		delete(c.byID, keyID)
	}
}

// Reserve implements [KeyStore]: it reserves in the underlying store, and
// records the reservation in the cached key.
func (c *CachedKeyStore) Reserve(ctx context.Context, keyID string, amount int64) error {
	err := c.keys.Reserve(ctx, keyID, amount)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.changeLocked(keyID)
	switch {
	case e == nil:
	case err == nil:
		if !e.key.Quota.Unlimited {
			e.key.Quota.Reserved = addSat(e.key.Quota.Reserved, amount)
		}
	case !errors.Is(err, ErrQuotaExceeded):
		c.forgetLocked(keyID)
	}
	return err
}

// Settle implements [KeyStore]: it settles in the underlying store, and
// records the settlement in the cached key.
func (c *CachedKeyStore) Settle(ctx context.Context, p SettleParams) (Quota, error) {
	q, err := c.keys.Settle(ctx, p)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.changeLocked(p.KeyID)
	switch {
	case e == nil:
	case err == nil || errors.Is(err, ErrQuotaExceeded):
		e.key.Quota, _ = e.key.Quota.settle(p)
	default:
		c.forgetLocked(p.KeyID)
	}
	return q, err
}

// Forget drops the cached key with id keyID, so that the next Lookup of
// it asks the underlying store: call it after changing the key there
// (disabling it, for example) to make the change seen at once.
func (c *CachedKeyStore) Forget(keyID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.changeLocked(keyID)
	c.forgetLocked(keyID)
}

// The optional capabilities of the underlying store pass through a
// CachedKeyStore: each of the methods below calls the underlying
// store's, or returns an error wrapping [ErrUnsupported] if it lacks the
// capability. Those that change a key drop it from the cache, so that
// this process sees the change at once (others within their TTL).
var (
	_ KeyPutter   = (*CachedKeyStore)(nil)
	_ IDLookup    = (*CachedKeyStore)(nil)
	_ KeyAdmin    = (*CachedKeyStore)(nil)
	_ UsageReader = (*CachedKeyStore)(nil)
)

// Unwrap returns the underlying store.
func (c *CachedKeyStore) Unwrap() KeyStore { return c.keys }

// PutKey implements [KeyPutter] (see above).
func (c *CachedKeyStore) PutKey(ctx context.Context, secret string, k Key) error {
	p, ok := c.keys.(KeyPutter)
	if !ok {
		return fmt.Errorf("auth: CachedKeyStore.PutKey: %w", ErrUnsupported)
	}
	err := p.PutKey(ctx, secret, k)
	c.Forget(k.ID)
	return err
}

// GetKey implements [KeyAdmin] (see above).
func (c *CachedKeyStore) GetKey(ctx context.Context, id string) (*Key, error) {
	a, ok := c.keys.(KeyAdmin)
	if !ok {
		return nil, fmt.Errorf("auth: CachedKeyStore.GetKey: %w", ErrUnsupported)
	}
	return a.GetKey(ctx, id)
}

// ListKeys implements [KeyAdmin] (see above).
func (c *CachedKeyStore) ListKeys(ctx context.Context, p ListKeysParams) ([]*Key, error) {
	a, ok := c.keys.(KeyAdmin)
	if !ok {
		return nil, fmt.Errorf("auth: CachedKeyStore.ListKeys: %w", ErrUnsupported)
	}
	return a.ListKeys(ctx, p)
}

// UpdateKey implements [KeyAdmin] (see above).
func (c *CachedKeyStore) UpdateKey(ctx context.Context, id string, fn func(*Key) error) (*Key, error) {
	a, ok := c.keys.(KeyAdmin)
	if !ok {
		return nil, fmt.Errorf("auth: CachedKeyStore.UpdateKey: %w", ErrUnsupported)
	}
	k, err := a.UpdateKey(ctx, id, fn)
	c.Forget(id)
	return k, err
}

// DeleteKey implements [KeyAdmin] (see above).
func (c *CachedKeyStore) DeleteKey(ctx context.Context, id string) error {
	a, ok := c.keys.(KeyAdmin)
	if !ok {
		return fmt.Errorf("auth: CachedKeyStore.DeleteKey: %w", ErrUnsupported)
	}
	err := a.DeleteKey(ctx, id)
	c.Forget(id)
	return err
}

// Usage implements [UsageReader] (see above).
func (c *CachedKeyStore) Usage(ctx context.Context, p UsageParams) ([]UsageRow, error) {
	u, ok := c.keys.(UsageReader)
	if !ok {
		return nil, fmt.Errorf("auth: CachedKeyStore.Usage: %w", ErrUnsupported)
	}
	return u.Usage(ctx, p)
}

// Ping asks the underlying store whether it answers, when it can be asked
// (it has a Ping(ctx) error method, as the stores of module
// github.com/gatewaykit/gatewaykit/store do); otherwise it returns nil.
// It lets a readiness check see through the cache.
func (c *CachedKeyStore) Ping(ctx context.Context) error {
	if p, ok := c.keys.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}

// Shared reports whether the underlying store says that it is shared by
// every replica of the gateway (it has a Shared() bool method, as the
// PostgreSQL stores of module github.com/gatewaykit/gatewaykit/store do);
// otherwise false. A readiness check reads it through the cache (package
// gateway's SharedPinger).
func (c *CachedKeyStore) Shared() bool {
	s, ok := c.keys.(interface{ Shared() bool })
	return ok && s.Shared()
}
