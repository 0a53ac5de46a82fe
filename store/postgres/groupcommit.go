package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/gatewaykit/gatewaykit/auth"
	"github.com/gatewaykit/gatewaykit/store/internal/sqlstore"
)

// Group commit of quota. Each Reserve and Settle is one statement that
// locks its key's row until its transaction commits: one at a time, a
// key would take a few thousand calls a second at most. So the calls
// wait in one queue, in the order they were made, and a writer goroutine
// takes all that are waiting (up to maxBatch) as one batch: it sends them
// in one round trip (a pgx batch), in order of key id (so that two
// replicas' batches never deadlock) and, for one key, in the order of
// the queue, the Settles of one key as one statement (gk_settle takes
// arrays, and inserts their usage rows), and commits once. Each call
// still gets its own result, as if it had run alone at its place in the
// queue. Nothing waits for a timer: a call that finds the writer idle is
// sent at once, and those that arrive while a batch commits make the
// next one.
//
// A Reserve waits for its batch: its answer admits or refuses a request.
// A Settle does not, once this KeyStore knows the key's quota (see
// [KeyStore]): it is answered in memory from the quota that the last
// commit returned for the key and the Settles still queued, and returns
// as soon as it is queued. The queue is bounded (queueSize Settles queued
// or committing): when it is full, Settle waits for room. The
// writer commits the queued Settles behind; a read that must see them
// (Lookup, the KeyAdmin and UsageReader methods, Flush) waits for those
// of its key, or all of them, first. Close commits what is queued.
//
// A batch commits with synchronous_commit off: the writer does not wait
// for the disk, only for PostgreSQL to have applied the batch, so every
// replica sees it at once. A crash of the PostgreSQL server itself (not
// of a gateway) may lose the quota calls of its last fraction of a
// second (at most three times wal_writer_delay, 600 ms by default). A
// gateway that stops cleanly loses nothing; one that crashes (kill -9)
// loses the Settles still queued or committing, which is at most one
// batch and what queued behind it.

const (
	// maxBatch bounds the calls of one batch.
	maxBatch = 512
	// defaultQueueSize bounds the Settles queued or committing.
	defaultQueueSize = 4096
	// defaultProjectionTTL is how long the quota that a commit returned
	// for a key serves to answer its next Settle in memory, when nothing
	// of the key is queued meanwhile.
	defaultProjectionTTL = time.Second
	// forgetAfter is how long the state of a key with nothing queued is
	// kept (it is dropped at the next sweep after it).
	forgetAfter = time.Minute
	// batchTimeout bounds the transaction of one batch.
	batchTimeout = 30 * time.Second
	// closeTimeout bounds how long Close retries the queued Settles
	// while the database cannot be reached.
	closeTimeout = 10 * time.Second
	// The writer's back-off after a batch failed for want of the
	// database: it tries again, doubling the wait.
	retryMin = 50 * time.Millisecond
	retryMax = 2 * time.Second
	// failureLogEvery is how often the writer logs that its batches keep
	// failing: the first failure at once, then once per interval while
	// they do, and once when a batch goes through again.
	failureLogEvery = time.Minute
)

// errClosed is the error of a quota call made after Close.
var errClosed = errors.New("postgres: the DB is closed")

// quotaOp is one Reserve (settle false) or Settle in the queue.
type quotaOp struct {
	settle bool
	keyID  string
	amount int64             // Reserve
	p      auth.SettleParams // Settle
	// async is set on a Settle that returned when it was queued: the
	// writer retries it until it commits, or Close gives up on it.
	async bool
	// gen is the generation of the key's state when the op was queued:
	// a result of an older generation does not refresh the state.
	gen uint64
	// doneIn is the number of the completion (quotaBatcher.completions)
	// that ended the op, 0 until then; set with the batcher's mutex.
	doneIn uint64
	// xid is set on a Settle queued again because the transaction that
	// carried it lost its connection during its COMMIT: the id of that
	// transaction, which may have committed (see quotaBatcher.run).
	xid int64

	// The result.
	status  string // Reserve: ok, not_found or exceeded
	found   bool   // Settle
	covered bool   // Settle
	q       auth.Quota
	err     error
	done    chan struct{}
}

// settleSum is the sum of Settles: what they release, use and cost.
type settleSum struct {
	n              int
	released, used int64
	cost           float64
}

func (s *settleSum) add(p auth.SettleParams) {
	s.n++
	s.released = sqlstore.AddSat(s.released, p.Reserved)
	s.used = sqlstore.AddSat(s.used, p.Used)
	s.cost = auth.AddCost(s.cost, p.CostUSD)
}

func (s *settleSum) sub(p auth.SettleParams) {
	if s.n--; s.n <= 0 {
		*s = settleSum{} // exact again, whatever the rounding of cost
		return
	}
	s.released = max(s.released-p.Reserved, 0)
	s.used = max(s.used-p.Used, 0)
	s.cost = max(s.cost-auth.CleanCost(p.CostUSD), 0)
}

// apply returns q after the Settles of s, in any order: releases and
// uses clamp at 0, so their order does not change the result.
func (s *settleSum) apply(q auth.Quota) auth.Quota {
	q.Used = sqlstore.AddSat(q.Used, s.used)
	q.CostUSD = auth.AddCost(q.CostUSD, s.cost)
	if q.Unlimited {
		q.Remaining, q.Reserved = 0, 0
		return q
	}
	q.Reserved = max(q.Reserved-s.released, 0)
	q.Remaining = max(q.Remaining-s.used, 0)
	return q
}

// keyState is what the batcher knows of one key's quota.
type keyState struct {
	// loaded is set when q holds the quota that a commit returned for
	// the key, with the Settles queued since applied: a Settle is then
	// answered from it at once.
	loaded bool
	q      auth.Quota
	at     time.Time // when q was last refreshed by a commit
	gen    uint64    // bumped when the key is changed by other means
	// pend sums the Settles queued and not yet ended; inflight counts
	// the calls of the key queued and not yet ended.
	pend     settleSum
	inflight int
	// last is the last Settle of the key that returned when queued (nil
	// if none): those before it end before it does.
	last *quotaOp
}

// quotaBatcher runs the group commits of one DB.
type quotaBatcher struct {
	db            *DB
	slots         chan struct{} // one per Settle queued or committing
	projectionTTL time.Duration
	closeWait     time.Duration // closeTimeout, but in tests

	mu          sync.Mutex
	closed      bool
	closeBy     time.Time
	queue       []*quotaOp
	keys        map[string]*keyState
	completions uint64 // counts the calls of complete
	lastSweep   time.Time
	lost        int // Settles given up on at Close

	// The writer's record of its failures, for its logs (loop only).
	failingSince time.Time // zero while batches go through
	loggedAt     time.Time // the last log of a failure
	failures     int       // batches failed since failingSince
	// failedBatches counts the batches that failed for want of the database.
	failedBatches atomic.Uint64

	kick chan struct{} // something is queued, or Close was called
	done chan struct{} // closed when the writer has ended
}

func newQuotaBatcher(db *DB, queueSize int, projectionTTL, closeWait time.Duration) *quotaBatcher {
	if queueSize <= 0 {
		queueSize = defaultQueueSize
	}
	if projectionTTL <= 0 {
		projectionTTL = defaultProjectionTTL
	}
	if closeWait <= 0 {
		closeWait = closeTimeout
	}
	b := &quotaBatcher{
		db:            db,
		slots:         make(chan struct{}, queueSize),
		projectionTTL: projectionTTL,
		closeWait:     closeWait,
		keys:          make(map[string]*keyState),
		kick:          make(chan struct{}, 1),
		done:          make(chan struct{}),
	}
	go b.loop()
	return b
}

// acquire takes a place in the queue, waiting for one while it is full,
// unless ctx ends first.
func (b *quotaBatcher) acquire(ctx context.Context) error {
	select {
	case b.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case b.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for room in the queue of quota calls: %w", ctx.Err())
	}
}

func (b *quotaBatcher) release(n int) {
	for range n {
		<-b.slots
	}
}

// stateLocked returns the state of the key keyID, made if missing.
func (b *quotaBatcher) stateLocked(keyID string) *keyState {
	st := b.keys[keyID]
	if st == nil {
		st = &keyState{}
		b.keys[keyID] = st
	}
	return st
}

// enqueueLocked appends op to the queue.
func (b *quotaBatcher) enqueueLocked(op *quotaOp) {
	op.done = make(chan struct{})
	b.queue = append(b.queue, op)
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// reserve queues a Reserve and waits for its result.
// A Reserve takes no place in the queue's bound: its caller waits for
// it, so the Reserves queued are at most the requests in flight.
func (b *quotaBatcher) reserve(keyID string, amount int64) (*quotaOp, error) {
	op := &quotaOp{keyID: keyID, amount: amount}
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errClosed
	}
	st := b.stateLocked(keyID)
	op.gen = st.gen
	st.inflight++
	b.enqueueLocked(op)
	b.mu.Unlock()
	<-op.done
	return op, op.err
}

// settle queues a Settle. If the key's quota is known, it returns at
// once with the quota after p, computed in memory; otherwise it waits
// for the commit and returns the database's answer.
func (b *quotaBatcher) settle(ctx context.Context, p auth.SettleParams) (q auth.Quota, found, covered bool, err error) {
	if err := b.acquire(ctx); err != nil {
		return auth.Quota{}, false, false, err
	}
	op := &quotaOp{settle: true, keyID: p.KeyID, p: p}
	now := time.Now()
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		b.release(1)
		return auth.Quota{}, false, false, errClosed
	}
	st := b.stateLocked(p.KeyID)
	op.gen = st.gen
	if st.loaded && st.inflight == 0 && now.Sub(st.at) >= b.projectionTTL {
		st.loaded = false // too old to answer from: ask the database
	}
	st.inflight++
	st.pend.add(p)
	if st.loaded {
		op.async = true
		st.q, covered = sqlstore.Settle(st.q, p)
		q = st.q
		st.last = op
	}
	b.enqueueLocked(op)
	b.mu.Unlock()
	if op.async {
		return q, true, covered, nil
	}
	<-op.done
	return op.q, op.found, op.covered, op.err
}

// pendingKey returns the last Settle of the key keyID that returned when
// queued, unless it had ended by completion number since, or nil.
func (b *quotaBatcher) pendingKey(keyID string, since uint64) *quotaOp {
	b.mu.Lock()
	defer b.mu.Unlock()
	st := b.keys[keyID]
	if st == nil || st.last == nil {
		return nil
	}
	if d := st.last.doneIn; d != 0 && d <= since {
		return nil
	}
	return st.last
}

// mark returns the number of the last completion, for pendingKey: an op
// whose doneIn is at most that had committed before mark was called.
func (b *quotaBatcher) mark() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.completions
}

// waitKey waits until every Settle of the key keyID that has returned
// has committed (or been given up on), or ctx ends.
func (b *quotaBatcher) waitKey(ctx context.Context, keyID string) error {
	return wait(ctx, b.pendingKey(keyID, math.MaxUint64))
}

// flush waits until every Settle that has returned has committed (or
// been given up on), or ctx ends.
func (b *quotaBatcher) flush(ctx context.Context) error {
	b.mu.Lock()
	var last []*quotaOp
	for _, st := range b.keys {
		if st.last != nil && st.last.doneIn == 0 {
			last = append(last, st.last)
		}
	}
	b.mu.Unlock()
	for _, op := range last {
		if err := wait(ctx, op); err != nil {
			return err
		}
	}
	return nil
}

func wait(ctx context.Context, op *quotaOp) error {
	if op == nil {
		return nil
	}
	select {
	case <-op.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("waiting for the queued settlements: %w", ctx.Err())
	}
}

// invalidate makes the state of the key keyID unknown: the next Settle
// asks the database. The key has been changed by other means than a
// Settle or Reserve (PutKey, UpdateKey, DeleteKey).
func (b *quotaBatcher) invalidate(keyID string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st := b.keys[keyID]; st != nil {
		st.gen++
		st.loaded = false
	}
}

// close stops taking calls, lets the writer commit what is queued (for
// at most closeTimeout while the database cannot be reached), and
// returns an error if some Settles could not be written.
func (b *quotaBatcher) close() error {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		b.closeBy = time.Now().Add(b.closeWait)
		select {
		case b.kick <- struct{}{}:
		default:
		}
	}
	b.mu.Unlock()
	<-b.done
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lost > 0 {
		return fmt.Errorf("postgres: %d settlements could not be written before Close gave up", b.lost)
	}
	return nil
}

// loop is the writer: it takes the queued calls, up to maxBatch, and
// commits them, until Close has been called and the queue is empty.
func (b *quotaBatcher) loop() {
	defer close(b.done)
	retry := time.Duration(0)
	for {
		b.mu.Lock()
		if len(b.queue) == 0 {
			closed := b.closed
			b.mu.Unlock()
			if closed {
				return
			}
			<-b.kick
			continue
		}
		n := min(len(b.queue), maxBatch)
		batch := slices.Clone(b.queue[:n])
		clear(b.queue[:n])
		b.queue = b.queue[n:]
		if len(b.queue) == 0 {
			b.queue = nil
		}
		b.mu.Unlock()
		err := b.run(batch)
		if err == nil {
			b.recovered()
			retry = 0
			continue
		}
		// The database could not be reached: the Settles that returned
		// are queued again, first; wait before trying again.
		b.failing(err)
		retry = min(max(2*retry, retryMin), retryMax)
		b.mu.Lock()
		closed, by := b.closed, b.closeBy
		b.mu.Unlock()
		wait := retry
		if closed {
			wait = min(wait, time.Until(by))
		}
		if wait > 0 {
			time.Sleep(wait)
		}
	}
}

// permanent reports whether err is an error of PostgreSQL about the
// statement itself, which trying again would not mend; not one of a lost
// connection, a rolled back transaction (serialization failure,
// deadlock), scarce resources or an operator's intervention (a server
// shutting down, a cancelled query), nor one of connecting (refused,
// even by the server), nor one of the client side (a timeout), nor a
// batch whose outcome is not known (errUnknownOutcome).
func permanent(err error) bool {
	if errors.Is(err, errUnknownOutcome) { // it may have committed: never sent again call by call
		return false
	}
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) { // whatever the server said, no statement ran
		return false
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || len(pgErr.Code) < 2 {
		return false
	}
	switch pgErr.Code[:2] {
	case "08", "40", "53", "57", "58":
		return false
	}
	return true
}

// run commits batch, in one transaction, or, if that fails on a
// statement, each call in a transaction of its own. Calls that end are
// completed. It returns an error if the database could not be reached:
// the calls that wait for their result then end with it, and the Settles
// that returned when queued are put back at the head of the queue, to be
// tried again (Close gives up on them after closeTimeout).
//
// Settles put back after a COMMIT whose answer was lost (their xid is
// set; they are the head of the queue, so the head of batch) are first
// looked up: if their transaction committed, they end with the results
// it gave them; if it did not, they are sent again.
func (b *quotaBatcher) run(batch []*quotaOp) error {
	timeout := batchTimeout
	b.mu.Lock()
	if b.closed {
		timeout = min(timeout, max(time.Until(b.closeBy), time.Second))
	}
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if xid := batch[0].xid; xid != 0 {
		n := 0
		for n < len(batch) && batch[n].xid == xid {
			n++
		}
		committed, err := b.committed(ctx, xid)
		if err != nil {
			return b.failed(batch, err, 0) // each keeps its xid
		}
		for _, op := range batch[:n] {
			op.xid = 0
		}
		if committed {
			b.complete(batch[:n], nil)
			if batch = batch[n:]; len(batch) == 0 {
				return nil
			}
		}
	}
	slices.SortStableFunc(batch, func(x, y *quotaOp) int { return cmp.Compare(x.keyID, y.keyID) })
	xid, err := b.commit(ctx, batch)
	b.db.writes.Note(err, writeFault)
	if err == nil {
		b.complete(batch, nil)
		return nil
	}
	if permanent(err) && len(batch) > 1 {
		for i, op := range batch {
			xid, err = b.commit(ctx, []*quotaOp{op})
			if err != nil && !permanent(err) {
				if op.async && xid != 0 {
					op.xid = xid // the one call of that transaction
				}
				b.complete(batch[:i], nil)
				return b.failed(batch[i:], err, 0)
			}
			op.err = err
		}
		b.complete(batch, nil)
		return nil
	}
	if permanent(err) {
		batch[0].err = err
		b.complete(batch, nil)
		return nil
	}
	return b.failed(batch, err, xid)
}

// errUnknownOutcome is the error of a batch whose transaction lost its
// connection during its COMMIT, and whose outcome the database could not
// tell: it may have committed.
var errUnknownOutcome = errors.New("the connection was lost while the transaction committed, and whether it did is not known")

// commit sends batch ([quotaBatcher.send]) and, if its connection was
// lost, once more on a new connection: at once if the transaction did
// not commit (it was lost before its COMMIT was sent), or if the
// database says that it did not (txid_status, asked when the COMMIT was
// sent and its answer lost, or timed out). If the database says that it
// committed, the batch has its results: commit returns nil. A batch
// whose outcome the database cannot tell fails with an error wrapping
// errUnknownOutcome, and the transaction's id.
func (b *quotaBatcher) commit(ctx context.Context, batch []*quotaOp) (xid int64, err error) {
	for try := 0; ; try++ {
		var committing bool
		xid, committing, err = b.send(ctx, batch)
		if err == nil {
			return 0, nil
		}
		lost := lostConn(err)
		if lost {
			b.db.reset()
		}
		var pgErr *pgconn.PgError
		if committing && (lost || !errors.As(err, &pgErr)) { // not an answer of the server's: the outcome is not known
			committed, serr := b.committed(ctx, xid)
			switch {
			case serr != nil:
				return xid, fmt.Errorf("%w: %w (asking: %w)", errUnknownOutcome, err, serr)
			case committed:
				return 0, nil
			}
		}
		if !lost || ctx.Err() != nil || try == 1 {
			return 0, err
		}
	}
}

// committed asks the database whether the transaction xid committed: true
// if it did, false if it was rolled back (or never began), and an error
// if the database cannot say (it cannot be reached, or the transaction is
// still in progress).
func (b *quotaBatcher) committed(ctx context.Context, xid int64) (bool, error) {
	var status *string
	err := b.db.retry(ctx, func() error {
		return b.db.pool.QueryRow(ctx, `SELECT txid_status($1)`, xid).Scan(&status)
	})
	switch {
	case err != nil:
		return false, err
	case status == nil:
		return false, fmt.Errorf("%w: transaction %d is too old for its status to be known", errUnknownOutcome, xid)
	case *status == "committed":
		return true, nil
	case *status == "aborted":
		return false, nil
	}
	return false, fmt.Errorf("%w: transaction %d is %s", errUnknownOutcome, xid, *status)
}

// failed ends the calls of batch that wait for their result with err,
// and queues the others again at the head of the queue, unless Close's
// time is up. A non-zero xid is the transaction that may have committed
// them, which they record. It returns err.
func (b *quotaBatcher) failed(batch []*quotaOp, err error, xid int64) error {
	b.mu.Lock()
	giveUp := b.closed && !time.Now().Before(b.closeBy)
	b.mu.Unlock()
	var ended, again []*quotaOp
	for _, op := range batch {
		if op.async && !giveUp {
			if xid != 0 {
				op.xid = xid
			}
			again = append(again, op)
			continue
		}
		op.err = err
		ended = append(ended, op)
	}
	b.complete(ended, again)
	return err
}

// failing records that a batch failed for want of the database, and logs
// it: the first failure at once, then once per failureLogEvery while
// they go on.
func (b *quotaBatcher) failing(err error) {
	now := time.Now()
	b.failedBatches.Add(1)
	if b.failingSince.IsZero() {
		b.failingSince = now
	}
	b.failures++
	if !b.loggedAt.IsZero() && now.Sub(b.loggedAt) < failureLogEvery {
		return
	}
	b.loggedAt = now
	b.db.log.LogAttrs(context.Background(), slog.LevelError, "postgres: the quota writer cannot reach the database; it keeps its settlements and tries again",
		slog.Int("pending", b.pending()), slog.Int("failed_batches", b.failures),
		slog.Duration("failing_for", now.Sub(b.failingSince).Round(time.Millisecond)), slog.String("error", err.Error()))
}

// recovered records that a batch went through, and logs it if batches
// had failed before.
func (b *quotaBatcher) recovered() {
	if b.failingSince.IsZero() {
		return
	}
	b.db.log.LogAttrs(context.Background(), slog.LevelInfo, "postgres: the quota writer reaches the database again",
		slog.Int("failed_batches", b.failures), slog.Duration("failed_for", time.Since(b.failingSince).Round(time.Millisecond)))
	b.failingSince, b.loggedAt, b.failures = time.Time{}, time.Time{}, 0
}

// pending returns the number of Settles queued or committing.
func (b *quotaBatcher) pending() int { return len(b.slots) }

// full reports whether the queue of Settles is full: a Settle would wait
// for room.
func (b *quotaBatcher) full() bool { return len(b.slots) == cap(b.slots) }

// complete ends the calls of ops: it brings the state of their keys up
// to date with their results, wakes their callers and frees their places
// in the queue. The calls of again are put back at the head of the queue,
// in order, in the same critical section.
func (b *quotaBatcher) complete(ops, again []*quotaOp) {
	now := time.Now()
	b.mu.Lock()
	b.completions++
	n := b.completions
	// base holds, for each key with a Settle in ops that reached its
	// key, the quota after its last one (and the Reserves after it).
	base := make(map[string]*auth.Quota)
	for _, op := range ops {
		st := b.keys[op.keyID]
		if op.settle {
			st.pend.sub(op.p)
			switch {
			case op.err != nil:
				if op.async {
					b.lost++
					b.db.log.LogAttrs(context.Background(), slog.LevelError, "postgres: a settlement could not be written; its usage is lost",
						slog.String("key_id", op.keyID), slog.Int64("reserved", op.p.Reserved), slog.Int64("used", op.p.Used),
						slog.String("model", op.p.Model), slog.String("error", op.err.Error()))
				}
			case !op.found:
				if op.async {
					b.db.log.LogAttrs(context.Background(), slog.LevelWarn, "postgres: a settlement of a key that no longer exists was not recorded",
						slog.String("key_id", op.keyID), slog.Int64("used", op.p.Used))
				}
			case op.gen == st.gen:
				q := op.q
				base[op.keyID] = &q
			}
		} else if op.err == nil && op.status == "ok" && op.gen == st.gen {
			if q, ok := base[op.keyID]; ok {
				if !q.Unlimited {
					q.Reserved = sqlstore.AddSat(q.Reserved, op.amount)
				}
			} else if st.loaded && !st.q.Unlimited {
				st.q.Reserved = sqlstore.AddSat(st.q.Reserved, op.amount)
			}
		}
		st.inflight--
		op.doneIn = n
	}
	for id, q := range base {
		st := b.keys[id]
		st.q = st.pend.apply(*q)
		st.loaded = true
		st.at = now
	}
	if len(again) > 0 {
		b.queue = append(again, b.queue...)
	}
	if now.Sub(b.lastSweep) >= forgetAfter {
		b.lastSweep = now
		for id, st := range b.keys {
			if st.inflight == 0 && now.Sub(st.at) >= forgetAfter {
				delete(b.keys, id)
			}
		}
	}
	b.mu.Unlock()
	settles := 0
	for _, op := range ops {
		if op.settle {
			settles++
		}
	}
	// The places first: a caller woken by its done (Flush) finds them
	// free.
	b.release(settles)
	for _, op := range ops {
		close(op.done)
	}
}

// send applies ops in one transaction: one statement for each Reserve,
// and one for each run of Settles of one key. It returns the
// transaction's id (txid_current), and whether err came from its COMMIT
// after it was sent ([DB.inTx]): every op has its result then.
func (b *quotaBatcher) send(ctx context.Context, ops []*quotaOp) (xid int64, committing bool, err error) {
	committing, err = b.db.inTx(ctx, func(tx pgx.Tx) error {
		var (
			pb     pgx.Batch
			groups [][]*quotaOp
		)
		pb.Queue("SET LOCAL synchronous_commit = off")
		pb.Queue("SELECT txid_current()")
		reserve, settle := b.db.q(`SELECT gk_reserve($1, $2, $3)`), b.db.q(`SELECT * FROM gk_settle($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`)
		for i := 0; i < len(ops); {
			op := ops[i]
			if !op.settle {
				pb.Queue(reserve, op.keyID, b.db.instance, op.amount)
				groups = append(groups, ops[i:i+1])
				i++
				continue
			}
			j := i + 1
			for j < len(ops) && ops[j].settle && ops[j].keyID == op.keyID {
				j++
			}
			group := ops[i:j]
			n := len(group)
			reserved, used, input, output := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
			model, cost, at := make([]string, n), make([]float64, n), make([]time.Time, n)
			cached, write, reasoning := make([]int64, n), make([]int64, n), make([]int64, n)
			for k, g := range group {
				reserved[k], used[k] = g.p.Reserved, g.p.Used
				model[k], input[k], output[k], cost[k], at[k] = g.p.Model, g.p.InputTokens, g.p.OutputTokens, g.p.CostUSD, g.p.Time
				cached[k], write[k], reasoning[k] = g.p.CachedTokens, g.p.CacheWriteTokens, g.p.ReasoningTokens
			}
			pb.Queue(settle, op.keyID, b.db.instance, reserved, used, model, input, output, cost, at, cached, write, reasoning)
			groups = append(groups, group)
			i = j
		}
		br := tx.SendBatch(ctx, &pb)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
			return err
		}
		if err := br.QueryRow().Scan(&xid); err != nil {
			return err
		}
		for _, group := range groups {
			if !group[0].settle {
				if err := br.QueryRow().Scan(&group[0].status); err != nil {
					return fmt.Errorf("postgres: quota of key %q: %w", group[0].keyID, err)
				}
				continue
			}
			rows, err := br.Query()
			if err != nil {
				return fmt.Errorf("postgres: quota of key %q: %w", group[0].keyID, err)
			}
			k := 0
			for rows.Next() {
				if k == len(group) {
					break
				}
				op := group[k]
				if err := rows.Scan(&op.found, &op.covered, &op.q.Unlimited, &op.q.Remaining, &op.q.Reserved, &op.q.Used,
					&op.q.BudgetUSD, &op.q.CostUSD); err != nil {
					rows.Close()
					return fmt.Errorf("postgres: quota of key %q: %w", op.keyID, err)
				}
				k++
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("postgres: quota of key %q: %w", group[0].keyID, err)
			}
			if k != len(group) {
				return fmt.Errorf("postgres: quota of key %q: %d results for %d settlements", group[0].keyID, k, len(group))
			}
		}
		return br.Close()
	})
	return xid, committing, err
}
