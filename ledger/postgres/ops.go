package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ghonce/ghonce/internal/crashpoint"
	"github.com/ghonce/ghonce/ledger"
	"github.com/jackc/pgx/v5"
)

// entryColumns is the column list scanEntry reads, in its order.
const entryColumns = `key, task, step, kind, repo, target, payload, payload_hash,
	status, outcome, ref_number, ref_id, ref_url, ref_sha, ref_text,
	owner_id, owner_host, owner_pid, lease_until, fence, attempts, last_error,
	created_at, updated_at, owner_boot, owner_pidns, owner_start,
	sending_at, sending_boot, sending_pidns, sending_pid, sending_start`

// scanEntry reads entryColumns, then extra (if any) into the given targets.
func scanEntry(row pgx.Row, extra ...any) (*ledger.Entry, error) {
	var (
		e      ledger.Entry
		status string
		lease  *time.Time
		sent   *time.Time
		ids    [5]int64 // owner_pidns, owner_start, sending_pidns, sending_pid, sending_start
	)
	dest := []any{&e.Key, &e.Task, &e.Step, &e.Kind, &e.Repo, &e.Target, &e.Payload, &e.PayloadHash,
		&status, &e.Outcome, &e.Ref.Number, &e.Ref.ID, &e.Ref.URL, &e.Ref.SHA, &e.Ref.Text,
		&e.Owner.ID, &e.Owner.Host, &e.Owner.PID, &lease, &e.Fence, &e.Attempts, &e.LastError,
		&e.CreatedAt, &e.UpdatedAt, &e.Owner.Boot, &ids[0], &ids[1],
		&sent, &e.Sending.Proc.Boot, &ids[2], &ids[3], &ids[4]}
	if err := row.Scan(append(dest, extra...)...); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, ledger.ErrNotFound
		}
		return nil, err
	}
	e.Status = ledger.Status(status)
	if lease != nil {
		e.LeaseUntil = lease.UTC()
	}
	if sent != nil {
		e.Sending.At = sent.UTC()
	}
	e.Owner.PIDNS, e.Owner.Start = uint64(ids[0]), uint64(ids[1])
	e.Sending.Proc.PIDNS, e.Sending.Proc.PID, e.Sending.Proc.Start = uint64(ids[2]), int(ids[3]), uint64(ids[4])
	if e.Payload == nil {
		e.Payload = []byte{}
	}
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	return &e, nil
}

// fakeNow is the test clock's time as a statement parameter, or nil (SQL
// NULL) for the server's clock.
func (l *Ledger) fakeNow() any {
	if l.fake == nil {
		return nil
	}
	return l.fake().UTC()
}

// now reads the time on tx: the server's clock_timestamp(), read after the
// transaction has locked the rows it writes, so a transaction that waited
// for a lock does not record the time it started waiting.
func (l *Ledger) now(ctx context.Context, tx pgx.Tx) (time.Time, error) {
	if l.fake != nil {
		return l.fake().UTC(), nil
	}
	var t time.Time
	err := tx.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&t)
	return t.UTC(), err
}

// lock reads key's entry, locks its row until tx ends, and then reads the
// time (see now).
func (l *Ledger) lock(ctx context.Context, tx pgx.Tx, key string) (*ledger.Entry, time.Time, error) {
	e, err := scanEntry(tx.QueryRow(ctx, "SELECT "+entryColumns+" FROM ghonce_entries WHERE key = $1 FOR UPDATE", key))
	if err != nil {
		return nil, time.Time{}, err
	}
	now, err := l.now(ctx, tx)
	return e, now, err
}

func addTransition(ctx context.Context, tx pgx.Tx, t ledger.Transition) error {
	_, err := tx.Exec(ctx, `INSERT INTO ghonce_transitions (key, at, owner, from_status, to_status, fence, why)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		t.Key, t.At, t.Owner, string(t.From), string(t.To), t.Fence, t.Why)
	return err
}

// write runs fn in one READ COMMITTED transaction and commits unless fn
// fails. fn locks the rows it changes (lock) before it reads the time.
func (l *Ledger) write(ctx context.Context, fn func(tx pgx.Tx) error) error {
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return l.dbErr(err)
	}
	defer tx.Rollback(context.Background())
	if err := fn(tx); err != nil {
		return l.dbErr(err)
	}
	if err := tx.Commit(ctx); err != nil {
		return l.dbErr(err)
	}
	return nil
}

// createSQL inserts a new entry and its first transition in one statement,
// if no entry has the key; it returns the new entry, or no row. The time is
// $15 (the test clock) or the server's clock.
const createSQL = `WITH t AS (SELECT coalesce($15::timestamptz, clock_timestamp()) AS now),
ins AS (
	INSERT INTO ghonce_entries (key, task, step, kind, repo, target, payload, payload_hash,
		status, owner_id, owner_host, owner_pid, lease_until, fence, attempts, created_at, updated_at,
		owner_boot, owner_pidns, owner_start)
	SELECT $1, $2, $3, $4, $5, $6, $7, $8, 'attempting', $9, $10, $11, t.now + $12::interval, 1, 1, t.now, t.now,
		$16, $17, $18 FROM t
	ON CONFLICT (key) DO NOTHING
	RETURNING ` + entryColumns + `
), tr AS (
	INSERT INTO ghonce_transitions (key, at, owner, from_status, to_status, fence, why)
	SELECT key, created_at, $13, '', 'attempting', 1, $14 FROM ins
)
SELECT ` + entryColumns + ` FROM ins`

// Claim implements ledger.Ledger. A claim of a key that has no entry is one
// statement (INSERT ... ON CONFLICT DO NOTHING, with its history row);
// taking over a failed entry or a dead lease is one short transaction under
// the entry's row lock, with the lease judged by the server's clock.
func (l *Ledger) Claim(ctx context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	// Most claims of a known key find it done (a re-run) or busy (another
	// runner has it): one read answers those, as true as if the claim had
	// happened at the moment of the read. A key with no entry is created by
	// one statement; one that has an entry is judged under its row lock. An
	// entry deleted in between (retention) sends the claim round again.
	for range 3 {
		var serverNow time.Time
		e, err := scanEntry(l.pool.QueryRow(ctx, "SELECT "+entryColumns+", clock_timestamp() FROM ghonce_entries WHERE key = $1", p.Key), &serverNow)
		switch {
		case errors.Is(err, ledger.ErrNotFound):
			c, err := l.create(ctx, p)
			if err != nil || c != nil {
				return c, err
			}
			// Another claim created it meanwhile.
		case err != nil:
			return nil, fmt.Errorf("claim %s: %w", p.Key, l.dbErr(err))
		default:
			if l.fake != nil {
				serverNow = l.fake()
			}
			if c := ledger.Settled(e, serverNow, p.TakeOverFence); c != nil {
				c.Now = serverNow.UTC()
				return c, nil
			}
		}
		var c *ledger.Claim
		err = l.write(ctx, func(tx pgx.Tx) error {
			e, now, err := l.lock(ctx, tx, p.Key)
			if err != nil {
				return err
			}
			if c = ledger.Settled(e, now, p.TakeOverFence); c != nil {
				c.Now = now
				return nil
			}
			c, err = acquire(ctx, tx, now, e, p)
			return err
		})
		if errors.Is(err, ledger.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("claim %s: %w", p.Key, err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("claim %s: the entry was created and deleted three times during the claim; is a retention job deleting entries in use?", p.Key)
}

// create inserts p's entry if the key is free; nil, nil if it is taken.
func (l *Ledger) create(ctx context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	payload := p.Payload
	if payload == nil {
		payload = []byte{}
	}
	e, err := scanEntry(l.pool.QueryRow(ctx, createSQL,
		p.Key, p.Task, p.Step, p.Kind, p.Repo, p.Target, payload, p.PayloadHash,
		p.Owner.ID, p.Owner.Host, p.Owner.PID, p.Lease, p.Owner.ID, p.Why, l.fakeNow(),
		p.Owner.Boot, int64(p.Owner.PIDNS), int64(p.Owner.Start)))
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("claim %s: %w", p.Key, l.dbErr(err))
	}
	return &ledger.Claim{State: ledger.ClaimCreated, Entry: e, Now: e.CreatedAt}, nil
}

func acquire(ctx context.Context, tx pgx.Tx, now time.Time, e *ledger.Entry, p ledger.ClaimParams) (*ledger.Claim, error) {
	after, err := scanEntry(tx.QueryRow(ctx, `UPDATE ghonce_entries SET status = 'attempting',
		fence = fence + 1, attempts = attempts + 1,
		owner_id = $1, owner_host = $2, owner_pid = $3, lease_until = $4, updated_at = $5,
		owner_boot = $8, owner_pidns = $9, owner_start = $10
		WHERE key = $6 AND fence = $7
		RETURNING `+entryColumns,
		p.Owner.ID, p.Owner.Host, p.Owner.PID, now.Add(p.Lease), now, p.Key, e.Fence,
		p.Owner.Boot, int64(p.Owner.PIDNS), int64(p.Owner.Start)))
	if err != nil {
		return nil, err
	}
	err = addTransition(ctx, tx, ledger.Transition{Key: p.Key, At: now, Owner: p.Owner.ID, From: e.Status, To: ledger.Attempting, Fence: after.Fence, Why: p.Why})
	if err != nil {
		return nil, err
	}
	return &ledger.Claim{State: ledger.ClaimAcquired, Entry: after, Prior: e.Status, PriorUpdatedAt: e.UpdatedAt, Now: now}, nil
}

// held locks key's entry for a write under fence: ErrNotFound for an
// unknown key, ErrFenced unless it is attempting under exactly that fence.
func (l *Ledger) held(ctx context.Context, tx pgx.Tx, key string, fence int64) (*ledger.Entry, time.Time, error) {
	e, now, err := l.lock(ctx, tx, key)
	if err != nil {
		return nil, time.Time{}, err
	}
	if err := ledger.Holds(e, fence); err != nil {
		return nil, time.Time{}, err
	}
	return e, now, nil
}

// Finish implements ledger.Ledger.
func (l *Ledger) Finish(ctx context.Context, p ledger.FinishParams) (*ledger.Entry, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	ref := p.Ref
	outcome := p.Outcome
	if p.Status != ledger.Done {
		// Failed, or Attempting to release the lease: ref and outcome stay.
		ref, outcome = ledger.Ref{}, ""
	}
	var out *ledger.Entry
	err := l.write(ctx, func(tx pgx.Tx) error {
		if p.Verifiable && p.Status == ledger.Done {
			// A record a rerun can establish again by asking GitHub need not
			// wait for the WAL flush (ledger.FinishParams.Verifiable): with
			// synchronous_commit off for this transaction alone the commit
			// is visible at once and durable with the WAL writer's next
			// flush, or with the next synchronous commit (the WAL is
			// flushed in order), so one forced write remains per action:
			// the claim.
			if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
				return err
			}
		}
		e, now, err := l.held(ctx, tx, p.Key, p.Fence)
		if err != nil {
			return err
		}
		if p.Status != ledger.Done {
			ref, outcome = e.Ref, e.Outcome
		}
		// Every case gives up the lease; a release keeps the sending mark
		// (what it sent may still land), done and failed clear it.
		sending := ""
		if p.Status != ledger.Attempting {
			sending = ", " + clearSending
		}
		out, err = scanEntry(tx.QueryRow(ctx, `UPDATE ghonce_entries SET status = $1, outcome = $2,
			ref_number = $3, ref_id = $4, ref_url = $5, ref_sha = $6, ref_text = $7,
			last_error = $8, owner_id = '', owner_host = '', owner_pid = 0, lease_until = NULL, updated_at = $9,
			owner_boot = '', owner_pidns = 0, owner_start = 0`+sending+`
			WHERE key = $10 AND fence = $11
			RETURNING `+entryColumns,
			string(p.Status), outcome, ref.Number, ref.ID, ref.URL, ref.SHA, ref.Text,
			p.Error, p.UpdatedAt(now), p.Key, p.Fence))
		if err != nil {
			return err
		}
		err = addTransition(ctx, tx, ledger.Transition{Key: p.Key, At: now, Owner: e.Owner.ID, From: e.Status, To: p.Status, Fence: p.Fence, Why: p.Why})
		if err == nil {
			// The reliability matrix's kill point "while done is being
			// written": everything is in the transaction, nothing committed.
			crashpoint.Hit(crashpoint.InFinish)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("finish %s: %w", p.Key, err)
	}
	return out, nil
}

// SetPayload implements ledger.Ledger. The replacement is recorded in the
// history as attempting → attempting with p.Why.
func (l *Ledger) SetPayload(ctx context.Context, p ledger.PayloadParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	payload := p.Payload
	if payload == nil {
		payload = []byte{}
	}
	err := l.write(ctx, func(tx pgx.Tx) error {
		e, now, err := l.lock(ctx, tx, p.Key)
		if err != nil {
			return err
		}
		if err := p.Allows(e); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE ghonce_entries SET payload = $1, payload_hash = $2, updated_at = $3
			WHERE key = $4 AND fence = $5`, payload, p.PayloadHash, now, p.Key, p.Fence); err != nil {
			return err
		}
		return addTransition(ctx, tx, ledger.Transition{Key: p.Key, At: now, Owner: e.Owner.ID, From: e.Status, To: e.Status, Fence: p.Fence, Why: p.Why})
	})
	if err != nil {
		return fmt.Errorf("set payload %s: %w", p.Key, err)
	}
	return nil
}

// Renew implements ledger.Ledger: the lease ends lease after the server's
// now. It also moves the entry's updated time, so an attempt that keeps
// renewing is not listed as stale.
func (l *Ledger) Renew(ctx context.Context, key string, fence int64, lease time.Duration) error {
	if err := ledger.ValidateRenew(key, lease); err != nil {
		return err
	}
	err := l.write(ctx, func(tx pgx.Tx) error {
		_, now, err := l.held(ctx, tx, key, fence)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE ghonce_entries SET lease_until = $1, updated_at = $2
			WHERE key = $3 AND fence = $4`, now.Add(lease), now, key, fence)
		return err
	})
	if err != nil {
		return fmt.Errorf("renew %s: %w", key, err)
	}
	return nil
}

// Now implements ledger.Ledger: the server's clock_timestamp() (or the
// test clock).
func (l *Ledger) Now(ctx context.Context) (time.Time, error) {
	if l.fake != nil {
		return l.fake().UTC(), nil
	}
	var t time.Time
	if err := l.pool.QueryRow(ctx, "SELECT clock_timestamp()").Scan(&t); err != nil {
		return time.Time{}, fmt.Errorf("read the ledger's clock: %w", l.dbErr(err))
	}
	return t.UTC(), nil
}

// clearSending is the assignment that clears the sending mark.
const clearSending = `sending_at = NULL, sending_boot = '', sending_pidns = 0, sending_pid = 0, sending_start = 0`

// MarkSending implements ledger.Ledger: a synchronous commit, so the mark
// is durable before the create leaves; its time is the server's.
func (l *Ledger) MarkSending(ctx context.Context, p ledger.SendingParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	err := l.write(ctx, func(tx pgx.Tx) error {
		_, now, err := l.held(ctx, tx, p.Key, p.Fence)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE ghonce_entries SET lease_until = $1, updated_at = $2, sending_at = $2,
			sending_boot = $3, sending_pidns = $4, sending_pid = $5, sending_start = $6
			WHERE key = $7 AND fence = $8`,
			now.Add(p.Lease), now, p.Proc.Boot, int64(p.Proc.PIDNS), p.Proc.PID, int64(p.Proc.Start), p.Key, p.Fence)
		return err
	})
	if err != nil {
		return fmt.Errorf("mark %s sending: %w", p.Key, err)
	}
	return nil
}

// Resolve implements ledger.Ledger. A resolved entry's outcome is
// "resolved"; resolving to Failed also clears its ref.
func (l *Ledger) Resolve(ctx context.Context, p ledger.ResolveParams) (*ledger.Entry, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var out *ledger.Entry
	err := l.write(ctx, func(tx pgx.Tx) error {
		e, now, err := l.lock(ctx, tx, p.Key)
		if err != nil {
			return err
		}
		ref, err := p.Apply(e, now)
		if err != nil {
			return err
		}
		out, err = scanEntry(tx.QueryRow(ctx, `UPDATE ghonce_entries SET status = $1, outcome = 'resolved',
			ref_number = $2, ref_id = $3, ref_url = $4, ref_sha = $5, ref_text = $6,
			owner_id = '', owner_host = '', owner_pid = 0, lease_until = NULL, updated_at = $7,
			owner_boot = '', owner_pidns = 0, owner_start = 0, `+clearSending+`
			WHERE key = $8 AND fence = $9
			RETURNING `+entryColumns,
			string(p.Status), ref.Number, ref.ID, ref.URL, ref.SHA, ref.Text, now, p.Key, e.Fence))
		if err != nil {
			return err
		}
		return addTransition(ctx, tx, ledger.Transition{Key: p.Key, At: now, Owner: "person:" + p.Who, From: e.Status, To: p.Status, Fence: e.Fence, Why: p.Note})
	})
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", p.Key, err)
	}
	return out, nil
}

// Get implements ledger.Ledger.
func (l *Ledger) Get(ctx context.Context, key string) (*ledger.Entry, error) {
	e, err := scanEntry(l.pool.QueryRow(ctx, "SELECT "+entryColumns+" FROM ghonce_entries WHERE key = $1", key))
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, l.dbErr(err))
	}
	return e, nil
}

// List implements ledger.Ledger. A Limit of zero or less means no limit.
func (l *Ledger) List(ctx context.Context, p ledger.ListParams) ([]*ledger.Entry, error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	for _, f := range []struct{ col, val string }{
		{"task", p.Task}, {"repo", p.Repo}, {"kind", p.Kind}, {"status", string(p.Status)},
	} {
		if f.val != "" {
			where = append(where, f.col+" = "+arg(f.val))
		}
	}
	if !p.UpdatedBefore.IsZero() {
		where = append(where, "updated_at < "+arg(p.UpdatedBefore.UTC()))
	}
	q := "SELECT " + entryColumns + " FROM ghonce_entries"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	// COLLATE "C": keys are ASCII; order them by byte, as SQLite does,
	// whatever the database's collation.
	q += ` ORDER BY created_at, key COLLATE "C"`
	if p.Limit > 0 {
		q += " LIMIT " + arg(p.Limit)
	}
	rows, err := l.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list entries: %w", l.dbErr(err))
	}
	defer rows.Close()
	out := []*ledger.Entry{}
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("list entries: %w", l.dbErr(err))
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list entries: %w", l.dbErr(err))
	}
	return out, nil
}

// History implements ledger.Ledger.
func (l *Ledger) History(ctx context.Context, key string) ([]ledger.Transition, error) {
	rows, err := l.pool.Query(ctx, `SELECT key, at, owner, from_status, to_status, fence, why
		FROM ghonce_transitions WHERE key = $1 ORDER BY id`, key)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", key, l.dbErr(err))
	}
	defer rows.Close()
	out := []ledger.Transition{}
	for rows.Next() {
		var (
			t        ledger.Transition
			from, to string
		)
		if err := rows.Scan(&t.Key, &t.At, &t.Owner, &from, &to, &t.Fence, &t.Why); err != nil {
			return nil, fmt.Errorf("history %s: %w", key, l.dbErr(err))
		}
		t.At, t.From, t.To = t.At.UTC(), ledger.Status(from), ledger.Status(to)
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history %s: %w", key, l.dbErr(err))
	}
	return out, nil
}

// GetMeta implements ledger.Ledger.
func (l *Ledger) GetMeta(ctx context.Context, name string) (string, error) {
	var v string
	err := l.pool.QueryRow(ctx, `SELECT value FROM ghonce_meta WHERE name = $1`, name).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("get meta %s: %w", name, ledger.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("get meta %s: %w", name, l.dbErr(err))
	}
	return v, nil
}

// PutMeta implements ledger.Ledger: one statement, so of concurrent
// ifAbsent writers the primary key lets exactly one insert.
func (l *Ledger) PutMeta(ctx context.Context, name, value string, ifAbsent bool) (bool, error) {
	if err := ledger.ValidateMetaName(name); err != nil {
		return false, err
	}
	q := `INSERT INTO ghonce_meta (name, value, updated_at) VALUES ($1, $2, coalesce($3::timestamptz, clock_timestamp()))
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`
	if ifAbsent {
		q = `INSERT INTO ghonce_meta (name, value, updated_at) VALUES ($1, $2, coalesce($3::timestamptz, clock_timestamp()))
		ON CONFLICT (name) DO NOTHING`
	}
	tag, err := l.pool.Exec(ctx, q, name, value, l.fakeNow())
	if err != nil {
		return false, fmt.Errorf("put meta %s: %w", name, l.dbErr(err))
	}
	return tag.RowsAffected() > 0, nil
}
