package auth

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// MemoryKeyStore is the in-memory reference [KeyStore]. It keeps only the
// SHA-256 of each secret, finds a key by that hash in O(1), and never
// logs. It is safe for concurrent use; Reserve and Settle serialise on one mutex,
// which is exact and fast enough for one process.
//
// The zero value is not usable: call [NewMemoryKeyStore].
type MemoryKeyStore struct {
	mu     sync.RWMutex
	byHash map[[sha256.Size]byte]*Key
	byID   map[string]*Key
	hashOf map[string][sha256.Size]byte // by key id; none for a key without a secret
	usage  map[usageBucket]*usageSum    // the usage rows, summed by key, model and second
}

var (
	_ KeyStore    = (*MemoryKeyStore)(nil)
	_ KeyPutter   = (*MemoryKeyStore)(nil)
	_ IDLookup    = (*MemoryKeyStore)(nil)
	_ KeyAdmin    = (*MemoryKeyStore)(nil)
	_ UsageReader = (*MemoryKeyStore)(nil)
)

// NewMemoryKeyStore returns an empty store.
func NewMemoryKeyStore() *MemoryKeyStore {
	return &MemoryKeyStore{
		byHash: make(map[[sha256.Size]byte]*Key),
		byID:   make(map[string]*Key),
		hashOf: make(map[string][sha256.Size]byte),
		usage:  make(map[usageBucket]*usageSum),
	}
}

// Add stores k under secret, which must be a well-formed key
// ([ValidSecret]; mint one with [NewSecret]), or empty for a key without
// a secret, found by its id only ([MemoryKeyStore.LookupID]), as
// [Identities] needs. k is copied, its Granted
// made [Key.GrantedQuota] (Remaining plus Used when k does not say). Add returns an
// error wrapping [ErrDuplicateKey] if k.ID or secret is already stored,
// and an error (that does not contain the secret) for a malformed secret
// or an empty id.
func (s *MemoryKeyStore) Add(_ context.Context, secret string, k Key) error {
	h, hashed, err := hashNew("Add", secret, k)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[k.ID]; ok {
		return fmt.Errorf("auth: MemoryKeyStore.Add: key id %q: %w", k.ID, ErrDuplicateKey)
	}
	if _, ok := s.byHash[h]; ok && hashed {
		return fmt.Errorf("auth: MemoryKeyStore.Add: key %q: secret already stored: %w", k.ID, ErrDuplicateKey)
	}
	c := k.Clone()
	if c.CreatedAt.IsZero() {
		c.CreatedAt = time.Now()
	}
	c.Quota.Remaining = max(c.Quota.Remaining, 0)
	c.Quota.Reserved = max(c.Quota.Reserved, 0)
	if c.Quota.Unlimited {
		c.Quota.Reserved = 0
	}
	c.Granted = c.GrantedQuota()
	s.storeLocked(c, h, hashed)
	return nil
}

// storeLocked stores c, under the secret hash h if hashed.
func (s *MemoryKeyStore) storeLocked(c *Key, h [sha256.Size]byte, hashed bool) {
	s.byID[c.ID] = c
	if hashed {
		s.byHash[h] = c
		s.hashOf[c.ID] = h
	}
}

// forgetSecretLocked drops the secret of the key with id id, if it has
// one.
func (s *MemoryKeyStore) forgetSecretLocked(id string) {
	if h, ok := s.hashOf[id]; ok {
		delete(s.byHash, h)
		delete(s.hashOf, id)
	}
}

// PutKey implements [KeyPutter]; an empty secret stores k without one.
func (s *MemoryKeyStore) PutKey(_ context.Context, secret string, k Key) error {
	h, hashed, err := hashNew("PutKey", secret, k)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if other, ok := s.byHash[h]; ok && hashed && other.ID != k.ID {
		return fmt.Errorf("auth: MemoryKeyStore.PutKey: key %q: secret already stored under another id: %w", k.ID, ErrDuplicateKey)
	}
	c := k.Clone()
	c.Quota = Budget(k.Quota, 0, 0)
	c.Granted = grantedBy(k.Quota)
	if c.CreatedAt.IsZero() {
		c.CreatedAt = time.Now()
	}
	if old, ok := s.byID[k.ID]; ok {
		c.Quota = Budget(k.Quota, old.Quota.Used, old.Quota.Reserved)
		c.Quota.CostUSD = old.Quota.CostUSD
		c.CreatedAt = old.CreatedAt
		s.forgetSecretLocked(k.ID)
	}
	s.storeLocked(c, h, hashed)
	return nil
}

// hashNew checks the secret and id of a key to store with method op, and
// returns the secret's hash, and whether there is a secret.
func hashNew(op, secret string, k Key) (h [sha256.Size]byte, hashed bool, err error) {
	switch {
	case k.ID == "":
		return h, false, fmt.Errorf("auth: MemoryKeyStore.%s: empty key id", op)
	case secret == "":
		return h, false, nil
	case !ValidSecret(secret):
		return h, false, fmt.Errorf("auth: MemoryKeyStore.%s: key %q: %w", op, k.ID, ErrMalformedCredential)
	}
	return sha256.Sum256([]byte(secret)), true, nil
}

// Disable marks the key with id keyID disabled: from then on the
// middleware refuses it with 401. It returns an error wrapping
// [ErrKeyNotFound] for an unknown id.
func (s *MemoryKeyStore) Disable(_ context.Context, keyID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.byID[keyID]
	if !ok {
		return fmt.Errorf("auth: key id %q: %w", keyID, ErrKeyNotFound)
	}
	k.Disabled = true
	return nil
}

// Lookup implements [KeyStore].
func (s *MemoryKeyStore) Lookup(_ context.Context, secret string) (*Key, error) {
	h := sha256.Sum256([]byte(secret))
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, ok := s.byHash[h]
	if !ok {
		return nil, ErrKeyNotFound
	}
	return k.Clone(), nil
}

// Reserve implements [KeyStore]. A negative amount is an error and
// changes nothing.
func (s *MemoryKeyStore) Reserve(_ context.Context, keyID string, amount int64) error {
	if amount < 0 {
		return fmt.Errorf("auth: Reserve: negative amount %d", amount)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.byID[keyID]
	if !ok {
		return fmt.Errorf("auth: key id %q: %w", keyID, ErrKeyNotFound)
	}
	q, granted := k.Quota.reserve(amount)
	if !granted && q.OverBudget() {
		return fmt.Errorf("auth: key id %q: cost %g USD reached the budget of %g USD: %w", keyID, q.CostUSD, q.BudgetUSD, ErrQuotaExceeded)
	}
	if !granted {
		return fmt.Errorf("auth: key id %q: reserving %d with %d left, all reserved: %w", keyID, amount, k.Quota.Remaining, ErrQuotaExceeded)
	}
	k.Quota = q
	return nil
}

// Settle implements [KeyStore]. A negative amount is an error and
// changes nothing.
func (s *MemoryKeyStore) Settle(_ context.Context, p SettleParams) (Quota, error) {
	if p.Reserved < 0 || p.Used < 0 {
		return Quota{}, fmt.Errorf("auth: Settle: negative amount (reserved %d, used %d)", p.Reserved, p.Used)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.byID[p.KeyID]
	if !ok {
		return Quota{}, fmt.Errorf("auth: key id %q: %w", p.KeyID, ErrKeyNotFound)
	}
	before := k.Quota.Remaining
	q, covered := k.Quota.settle(p)
	k.Quota = q
	if b, ok := bucketOf(p, time.Now()); ok {
		sum := s.usage[b]
		if sum == nil {
			sum = new(usageSum)
			s.usage[b] = sum
		}
		sum.add(p)
	}
	if !covered {
		return q, fmt.Errorf("auth: key id %q: used %d with %d left: %w", p.KeyID, p.Used, before, ErrQuotaExceeded)
	}
	return q, nil
}

// LookupID implements [IDLookup]: it is GetKey.
func (s *MemoryKeyStore) LookupID(ctx context.Context, id string) (*Key, error) {
	return s.GetKey(ctx, id)
}

// GetKey implements [KeyAdmin].
func (s *MemoryKeyStore) GetKey(_ context.Context, id string) (*Key, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	k, ok := s.byID[id]
	if !ok {
		return nil, fmt.Errorf("auth: key id %q: %w", id, ErrKeyNotFound)
	}
	return k.Clone(), nil
}

// ListKeys implements [KeyAdmin]. It sorts the ids at each call, which
// suits the few thousand keys that one process holds.
func (s *MemoryKeyStore) ListKeys(_ context.Context, p ListKeysParams) ([]*Key, error) {
	limit := p.Limit
	if limit <= 0 {
		limit = DefaultListLimit
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	ids := make([]string, 0, len(s.byID))
	for id := range s.byID {
		if id > p.After {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, strings.Compare)
	ids = ids[:min(limit, len(ids))]
	keys := make([]*Key, len(ids))
	for i, id := range ids {
		keys[i] = s.byID[id].Clone()
	}
	return keys, nil
}

// UpdateKey implements [KeyAdmin]; fn is called with the store locked,
// once.
func (s *MemoryKeyStore) UpdateKey(_ context.Context, id string, fn func(*Key) error) (*Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.byID[id]
	if !ok {
		return nil, fmt.Errorf("auth: key id %q: %w", id, ErrKeyNotFound)
	}
	c := k.Clone()
	if err := fn(c); err != nil {
		return nil, err
	}
	*k = *UpdatedKey(k, c)
	return k.Clone(), nil
}

// UpdatedKey returns the key that [KeyAdmin.UpdateKey] stores when its fn
// changed stored into changed: changed's fields, but the ID, CreatedAt
// and usage (Quota.Used, Reserved and CostUSD) of stored, and a quota
// that follows the rules of [Quota] (nothing negative; an unlimited
// quota has no Remaining or Reserved, and its key no Granted). For the
// implementations of KeyAdmin.
func UpdatedKey(stored, changed *Key) *Key {
	n := changed.Clone()
	n.ID, n.CreatedAt = stored.ID, stored.CreatedAt
	q := stored.Quota
	q.Unlimited, q.BudgetUSD = changed.Quota.Unlimited, max(changed.Quota.BudgetUSD, 0)
	q.Remaining = max(changed.Quota.Remaining, 0)
	n.Granted = max(changed.Granted, 0)
	if q.Unlimited {
		q.Remaining, q.Reserved = 0, 0
		n.Granted = 0
	}
	n.Quota = q
	return n
}

// DeleteKey implements [KeyAdmin].
func (s *MemoryKeyStore) DeleteKey(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.byID[id]; !ok {
		return fmt.Errorf("auth: key id %q: %w", id, ErrKeyNotFound)
	}
	s.forgetSecretLocked(id)
	delete(s.byID, id)
	return nil
}

// Usage implements [UsageReader]. The store sums the usage rows of each
// key and model by the second (its memory grows with the seconds that
// saw requests, not with the requests), so From and To are honoured to
// the second; Usage scans those sums, which suits the life of one
// process. A gateway that keeps its usage for months uses a database
// store.
func (s *MemoryKeyStore) Usage(_ context.Context, p UsageParams) ([]UsageRow, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return aggregate(s.usage, p), nil
}
