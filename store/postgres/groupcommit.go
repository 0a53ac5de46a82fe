package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/gatewaykit/gatewaykit/auth"
)

// Group commit of quota. Each Reserve and Settle is one statement that
// locks its key's row until its transaction commits, and a commit waits
// for the WAL to reach the disk: one at a time, a key would take a few
// thousand requests a second at most. So the calls that arrive while a
// transaction commits wait for the next one and share it: the committer
// sends them in one round trip (a pgx batch), in order of key id (so that
// two replicas' batches never deadlock), the Settles of one key as one
// statement (gk_settle takes arrays, and inserts their usage rows), and
// commits once. Each call still
// gets its own result, as if it had run alone at its place in the batch. Nothing waits for a timer: a call that finds no batch in flight
// is sent at once.
//
// A batch commits with synchronous_commit off: the caller does not wait
// for the disk, only for PostgreSQL to have applied the batch, so every
// replica sees it at once. A crash of the PostgreSQL server itself (not
// of a gateway) may lose the quota calls of its last fraction of a
// second (at most three times wal_writer_delay, 600 ms by default); a
// gateway that stops, cleanly or not, loses nothing that it was told
// was done.

const (
	// committers is how many batches are in flight at once.
	committers = 2
	// maxBatch bounds the calls of one batch.
	maxBatch = 512
	// batchTimeout bounds the transaction of one batch.
	batchTimeout = 30 * time.Second
)

// quotaOp is one Reserve (settle false) or Settle waiting for its batch.
type quotaOp struct {
	settle bool
	keyID  string
	amount int64             // Reserve
	p      auth.SettleParams // Settle

	// The result.
	status  string // Reserve: ok, not_found or exceeded
	found   bool   // Settle
	covered bool   // Settle
	q       auth.Quota
	err     error
	done    chan struct{}
}

// quotaBatcher runs the group commits of one DB.
type quotaBatcher struct {
	db     *DB
	mu     sync.RWMutex // held to send on ops; Lock to close it
	closed bool
	ops    chan *quotaOp
	wg     sync.WaitGroup
}

func newQuotaBatcher(db *DB) *quotaBatcher {
	b := &quotaBatcher{db: db, ops: make(chan *quotaOp, maxBatch)}
	for range committers {
		b.wg.Go(b.loop)
	}
	return b
}

// do queues op and waits for its result.
func (b *quotaBatcher) do(op *quotaOp) error {
	op.done = make(chan struct{})
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return errors.New("postgres: the DB is closed")
	}
	b.ops <- op
	b.mu.RUnlock()
	<-op.done
	return op.err
}

// close lets the queued calls finish and stops the committers.
func (b *quotaBatcher) close() {
	b.mu.Lock()
	if !b.closed {
		b.closed = true
		close(b.ops)
	}
	b.mu.Unlock()
	b.wg.Wait()
}

func (b *quotaBatcher) loop() {
	batch := make([]*quotaOp, 0, maxBatch)
	for op := range b.ops {
		batch = append(batch[:0], op)
	fill:
		for len(batch) < maxBatch {
			select {
			case op, ok := <-b.ops:
				if !ok {
					break fill
				}
				batch = append(batch, op)
			default:
				break fill
			}
		}
		b.run(batch)
	}
}

// run applies batch in one transaction, or, if that fails, each call in
// a transaction of its own, and wakes the callers.
func (b *quotaBatcher) run(batch []*quotaOp) {
	defer func() {
		for _, op := range batch {
			close(op.done)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	if len(batch) > 1 {
		slices.SortStableFunc(batch, func(x, y *quotaOp) int { return cmp.Compare(x.keyID, y.keyID) })
		if err := b.send(ctx, batch); err == nil {
			return
		}
	}
	for _, op := range batch {
		op.err = b.send(ctx, []*quotaOp{op})
	}
}

// send applies ops in one transaction: one statement for each Reserve,
// and one for each run of Settles of one key.
func (b *quotaBatcher) send(ctx context.Context, ops []*quotaOp) error {
	return pgx.BeginFunc(ctx, b.db.pool, func(tx pgx.Tx) error {
		var (
			pb     pgx.Batch
			groups [][]*quotaOp
		)
		pb.Queue("SET LOCAL synchronous_commit = off")
		reserve, settle := b.db.q(`SELECT gk_reserve($1, $2, $3)`), b.db.q(`SELECT * FROM gk_settle($1, $2, $3, $4, $5, $6, $7, $8, $9)`)
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
			for k, g := range group {
				reserved[k], used[k] = g.p.Reserved, g.p.Used
				model[k], input[k], output[k], cost[k], at[k] = g.p.Model, g.p.InputTokens, g.p.OutputTokens, g.p.CostUSD, g.p.Time
			}
			pb.Queue(settle, op.keyID, b.db.instance, reserved, used, model, input, output, cost, at)
			groups = append(groups, group)
			i = j
		}
		br := tx.SendBatch(ctx, &pb)
		defer br.Close()
		if _, err := br.Exec(); err != nil {
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
}
