package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ghonce/ghonce/internal/crashpoint"
	"github.com/ghonce/ghonce/ledger"
)

// entryColumns is the column list scanEntry reads, in its order.
const entryColumns = `key, task, step, kind, repo, target, payload, payload_hash,
	status, outcome, ref_number, ref_id, ref_url, ref_sha, ref_text,
	owner_id, owner_host, owner_pid, lease_until, fence, attempts, last_error,
	created_at, updated_at`

type scanner interface{ Scan(dest ...any) error }

func scanEntry(s scanner) (*ledger.Entry, error) {
	var (
		e                    ledger.Entry
		status               string
		lease                sql.NullInt64
		createdAt, updatedAt int64
	)
	err := s.Scan(&e.Key, &e.Task, &e.Step, &e.Kind, &e.Repo, &e.Target, &e.Payload, &e.PayloadHash,
		&status, &e.Outcome, &e.Ref.Number, &e.Ref.ID, &e.Ref.URL, &e.Ref.SHA, &e.Ref.Text,
		&e.Owner.ID, &e.Owner.Host, &e.Owner.PID, &lease, &e.Fence, &e.Attempts, &e.LastError,
		&createdAt, &updatedAt)
	if err != nil {
		return nil, err
	}
	e.Status = ledger.Status(status)
	if lease.Valid {
		e.LeaseUntil = fromNanos(lease.Int64)
	}
	e.CreatedAt = fromNanos(createdAt)
	e.UpdatedAt = fromNanos(updatedAt)
	return &e, nil
}

// Times are stored as nanoseconds since the Unix epoch, UTC.

// maxSeconds bounds the times int64 nanoseconds hold (the years 1678 to 2262).
const maxSeconds = math.MaxInt64 / int64(time.Second)

// toNanos converts t for storage, clamping a time beyond what int64
// nanoseconds hold instead of wrapping around.
func toNanos(t time.Time) int64 {
	switch s := t.Unix(); {
	case s >= maxSeconds:
		return math.MaxInt64
	case s <= -maxSeconds:
		return math.MinInt64
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time { return time.Unix(0, n).UTC() }

// leaseEnd is now+lease, clamped like toNanos.
func leaseEnd(now time.Time, lease time.Duration) int64 {
	n := toNanos(now)
	if lease > 0 && n > math.MaxInt64-int64(lease) {
		return math.MaxInt64
	}
	return n + int64(lease)
}

func getEntry(ctx context.Context, q querier, key string) (*ledger.Entry, error) {
	e, err := scanEntry(q.QueryRowContext(ctx, "SELECT "+entryColumns+" FROM entries WHERE key = ?", key))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ledger.ErrNotFound
	}
	return e, err
}

func addTransition(ctx context.Context, tx *sql.Tx, t ledger.Transition) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO transitions (key, at, owner, from_status, to_status, fence, why)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		t.Key, toNanos(t.At), t.Owner, string(t.From), string(t.To), t.Fence, t.Why)
	return err
}

// write runs fn in one BEGIN IMMEDIATE transaction, with now read once the
// write lock is held, and commits unless fn fails. The commit is forced to
// disk before write returns.
func (l *Ledger) write(ctx context.Context, fn func(tx *sql.Tx, now time.Time) error) error {
	return l.writeSync(ctx, "PRAGMA synchronous = FULL", fn)
}

// writeUnforced is write with synchronous=NORMAL: the commit reaches the
// operating system but is not fsynced (see the package doc for when that is
// allowed and what a crash then loses).
func (l *Ledger) writeUnforced(ctx context.Context, fn func(tx *sql.Tx, now time.Time) error) error {
	return l.writeSync(ctx, "PRAGMA synchronous = NORMAL", fn)
}

// writeSync runs fn on the writer connection after setting its synchronous
// mode with the statement mode. The mode is set before every transaction,
// so none inherits the previous one's.
func (l *Ledger) writeSync(ctx context.Context, mode string, fn func(tx *sql.Tx, now time.Time) error) error {
	if l.readOnly {
		return fmt.Errorf("ledger %s is open read-only", l.path)
	}
	select {
	case l.writer <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.writer }()
	conn, err := l.wdb.Conn(ctx)
	if err != nil {
		return l.dbErr(err)
	}
	defer conn.Close() // back to wdb, for the next write
	if l.unsynced {
		mode = "PRAGMA synchronous = OFF"
	}
	if _, err := conn.ExecContext(ctx, mode); err != nil {
		return l.dbErr(err)
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return l.dbErr(err)
	}
	defer tx.Rollback()
	if err := fn(tx, l.now().UTC()); err != nil {
		return l.dbErr(err)
	}
	if err := tx.Commit(); err != nil {
		return l.dbErr(err)
	}
	return nil
}

// Claim implements ledger.Ledger.
func (l *Ledger) Claim(ctx context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	switch {
	case p.Key == "":
		return nil, errors.New("claim: key is empty")
	case p.Owner.ID == "":
		return nil, fmt.Errorf("claim %s: owner ID is empty", p.Key)
	case p.Lease <= 0:
		return nil, fmt.Errorf("claim %s: lease %s is not positive", p.Key, p.Lease)
	}
	// Most claims of a known key find it done (a re-run) or busy (another
	// runner has it). A read answers those without the write lock; the
	// answer is as true as if the claim had happened at the moment of the read.
	// A done entry usually comes from the replay cache (replay.go).
	e, err := l.replays.lookup(ctx, l.db, p.Key)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
	case err != nil:
		return nil, fmt.Errorf("claim %s: %w", p.Key, l.dbErr(err))
	default:
		if c := settled(e, l.now(), p.TakeOverFence); c != nil {
			return c, nil
		}
	}
	var c *ledger.Claim
	err = l.write(ctx, func(tx *sql.Tx, now time.Time) error {
		e, err := getEntry(ctx, tx, p.Key)
		if errors.Is(err, ledger.ErrNotFound) {
			c, err = create(ctx, tx, now, p)
			return err
		}
		if err != nil {
			return err
		}
		if c = settled(e, now, p.TakeOverFence); c != nil {
			return nil
		}
		c, err = acquire(ctx, tx, now, e, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim %s: %w", p.Key, err)
	}
	return c, nil
}

// settled returns the claim for an entry that cannot be taken (done, or held
// by a live lease that takeOver does not name), or nil if it can: it is
// failed, or attempting with a dead or released lease, or takeOver names its
// fence. (Fences start at 1, so a zero takeOver names none.)
func settled(e *ledger.Entry, now time.Time, takeOver int64) *ledger.Claim {
	switch {
	case e.Status == ledger.Done:
		return &ledger.Claim{State: ledger.ClaimDone, Entry: e, Prior: e.Status}
	case e.LeaseLive(now) && takeOver != e.Fence:
		return &ledger.Claim{State: ledger.ClaimBusy, Entry: e, Prior: e.Status}
	}
	return nil
}

func create(ctx context.Context, tx *sql.Tx, now time.Time, p ledger.ClaimParams) (*ledger.Claim, error) {
	payload := p.Payload
	if payload == nil {
		payload = []byte{}
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO entries (key, task, step, kind, repo, target,
		payload, payload_hash, status, owner_id, owner_host, owner_pid, lease_until,
		fence, attempts, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 1, ?, ?)`,
		p.Key, p.Task, p.Step, p.Kind, p.Repo, p.Target, payload, p.PayloadHash,
		string(ledger.Attempting), p.Owner.ID, p.Owner.Host, p.Owner.PID, leaseEnd(now, p.Lease),
		toNanos(now), toNanos(now))
	if err != nil {
		return nil, err
	}
	err = addTransition(ctx, tx, ledger.Transition{Key: p.Key, At: now, Owner: p.Owner.ID, To: ledger.Attempting, Fence: 1, Why: p.Why})
	if err != nil {
		return nil, err
	}
	// The entry as stored, built here rather than read back: the hot path
	// saves a query. Times go through toNanos and back, as a read would.
	at := fromNanos(toNanos(now))
	e := &ledger.Entry{
		Key: p.Key, Task: p.Task, Step: p.Step, Kind: p.Kind, Repo: p.Repo, Target: p.Target,
		Payload: payload, PayloadHash: p.PayloadHash, Status: ledger.Attempting,
		Owner: p.Owner, LeaseUntil: fromNanos(leaseEnd(now, p.Lease)), Fence: 1, Attempts: 1,
		CreatedAt: at, UpdatedAt: at,
	}
	return &ledger.Claim{State: ledger.ClaimCreated, Entry: e}, nil
}

func acquire(ctx context.Context, tx *sql.Tx, now time.Time, e *ledger.Entry, p ledger.ClaimParams) (*ledger.Claim, error) {
	res, err := tx.ExecContext(ctx, `UPDATE entries SET status = ?, fence = fence + 1, attempts = attempts + 1,
		owner_id = ?, owner_host = ?, owner_pid = ?, lease_until = ?, updated_at = ?
		WHERE key = ? AND fence = ?`,
		string(ledger.Attempting), p.Owner.ID, p.Owner.Host, p.Owner.PID, leaseEnd(now, p.Lease), toNanos(now),
		p.Key, e.Fence)
	if err := oneRow(res, err); err != nil {
		return nil, err
	}
	err = addTransition(ctx, tx, ledger.Transition{Key: p.Key, At: now, Owner: p.Owner.ID, From: e.Status, To: ledger.Attempting, Fence: e.Fence + 1, Why: p.Why})
	if err != nil {
		return nil, err
	}
	after := *e // as the UPDATE left it
	after.Status, after.Fence, after.Attempts = ledger.Attempting, e.Fence+1, e.Attempts+1
	after.Owner, after.LeaseUntil, after.UpdatedAt = p.Owner, fromNanos(leaseEnd(now, p.Lease)), fromNanos(toNanos(now))
	return &ledger.Claim{State: ledger.ClaimAcquired, Entry: &after, Prior: e.Status, PriorUpdatedAt: e.UpdatedAt}, nil
}

// oneRow checks that an UPDATE inside the write transaction changed exactly
// the row it was aimed at; anything else is a bug, not a race.
func oneRow(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("update changed %d rows, want 1", n)
	}
	return nil
}

// held loads key for a write under fence: ErrNotFound for an unknown key,
// ErrFenced unless it is attempting under exactly that fence.
func held(ctx context.Context, tx *sql.Tx, key string, fence int64) (*ledger.Entry, error) {
	e, err := getEntry(ctx, tx, key)
	if err != nil {
		return nil, err
	}
	if e.Status != ledger.Attempting || e.Fence != fence {
		return nil, ledger.ErrFenced
	}
	return e, nil
}

// Finish implements ledger.Ledger.
func (l *Ledger) Finish(ctx context.Context, p ledger.FinishParams) (*ledger.Entry, error) {
	if p.Key == "" {
		return nil, errors.New("finish: key is empty")
	}
	if !p.Status.Valid() {
		return nil, fmt.Errorf("finish %s: status %q is not attempting, done or failed", p.Key, p.Status)
	}
	// A record a rerun can read back from GitHub need not be forced: the
	// claim before it was, and losing this one costs a look-up.
	write := l.write
	if p.Verifiable {
		write = l.writeUnforced
	}
	var out *ledger.Entry
	err := write(ctx, func(tx *sql.Tx, now time.Time) error {
		e, err := held(ctx, tx, p.Key, p.Fence)
		if err != nil {
			return err
		}
		// Every case gives up the lease; the WHERE clause repeats the fence
		// check that held made.
		var res sql.Result
		switch p.Status {
		case ledger.Done:
			res, err = tx.ExecContext(ctx, `UPDATE entries SET status = ?, outcome = ?,
				ref_number = ?, ref_id = ?, ref_url = ?, ref_sha = ?, ref_text = ?,
				last_error = ?, owner_id = '', owner_host = '', owner_pid = 0, lease_until = NULL, updated_at = ?
				WHERE key = ? AND status = 'attempting' AND fence = ?`,
				string(ledger.Done), p.Outcome, p.Ref.Number, p.Ref.ID, p.Ref.URL, p.Ref.SHA, p.Ref.Text,
				p.Error, toNanos(now), p.Key, p.Fence)
		default: // Failed, or Attempting to release the lease
			res, err = tx.ExecContext(ctx, `UPDATE entries SET status = ?, last_error = ?,
				owner_id = '', owner_host = '', owner_pid = 0, lease_until = NULL, updated_at = ?
				WHERE key = ? AND status = 'attempting' AND fence = ?`,
				string(p.Status), p.Error, toNanos(now), p.Key, p.Fence)
		}
		if err := oneRow(res, err); err != nil {
			return err
		}
		err = addTransition(ctx, tx, ledger.Transition{Key: p.Key, At: now, Owner: e.Owner.ID, From: e.Status, To: p.Status, Fence: p.Fence, Why: p.Why})
		if err != nil {
			return err
		}
		after := *e // as the UPDATE left it
		after.Status, after.LastError = p.Status, p.Error
		if p.Status == ledger.Done {
			after.Outcome, after.Ref = p.Outcome, p.Ref
		}
		after.Owner, after.LeaseUntil, after.UpdatedAt = ledger.Owner{}, time.Time{}, fromNanos(toNanos(now))
		out = &after
		// The reliability matrix's kill point "while done is being
		// written": everything is in the transaction, nothing committed.
		crashpoint.Hit(crashpoint.InFinish)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("finish %s: %w", p.Key, err)
	}
	return out, nil
}

// SetPayload implements ledger.Ledger. The replacement is recorded in the
// history as attempting → attempting with p.Why.
func (l *Ledger) SetPayload(ctx context.Context, p ledger.PayloadParams) error {
	if p.Key == "" {
		return errors.New("set payload: key is empty")
	}
	payload := p.Payload
	if payload == nil {
		payload = []byte{}
	}
	status := ledger.Attempting
	if p.Done {
		status = ledger.Done
		// A done entry's description changes: no process may replay the
		// old one from its cache.
		defer l.replays.forget(p.Key)
	}
	err := l.write(ctx, func(tx *sql.Tx, now time.Time) error {
		var e *ledger.Entry
		var err error
		if p.Done {
			e, err = getEntry(ctx, tx, p.Key)
			if err == nil && (e.Status != ledger.Done || e.Fence != p.Fence) {
				err = ledger.ErrFenced
			}
		} else {
			e, err = held(ctx, tx, p.Key, p.Fence)
		}
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE entries SET payload = ?, payload_hash = ?, updated_at = ?
			WHERE key = ? AND status = ? AND fence = ?`,
			payload, p.PayloadHash, toNanos(now), p.Key, string(status), p.Fence)
		if err := oneRow(res, err); err != nil {
			return err
		}
		return addTransition(ctx, tx, ledger.Transition{Key: p.Key, At: now, Owner: e.Owner.ID, From: e.Status, To: e.Status, Fence: p.Fence, Why: p.Why})
	})
	if err != nil {
		return fmt.Errorf("set payload %s: %w", p.Key, err)
	}
	return nil
}

// Renew implements ledger.Ledger. It also moves the entry's updated time, so
// an attempt that keeps renewing is not listed as stale. It is not forced to
// disk: a renewal lost with the machine only shortens the lease of a holder
// that died with it.
func (l *Ledger) Renew(ctx context.Context, key string, fence int64, lease time.Duration) error {
	if key == "" {
		return errors.New("renew: key is empty")
	}
	if lease <= 0 {
		return fmt.Errorf("renew %s: lease %s is not positive", key, lease)
	}
	err := l.writeUnforced(ctx, func(tx *sql.Tx, now time.Time) error {
		if _, err := held(ctx, tx, key, fence); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE entries SET lease_until = ?, updated_at = ?
			WHERE key = ? AND status = 'attempting' AND fence = ?`,
			leaseEnd(now, lease), toNanos(now), key, fence)
		return oneRow(res, err)
	})
	if err != nil {
		return fmt.Errorf("renew %s: %w", key, err)
	}
	return nil
}

// Resolve implements ledger.Ledger. A resolved entry's outcome is
// "resolved"; resolving to Failed also clears its ref, since a failed entry
// points at nothing, and resolving to Done keeps what p.Ref leaves zero.
func (l *Ledger) Resolve(ctx context.Context, p ledger.ResolveParams) (*ledger.Entry, error) {
	switch {
	case p.Key == "":
		return nil, errors.New("resolve: key is empty")
	case p.Status != ledger.Done && p.Status != ledger.Failed:
		return nil, fmt.Errorf("resolve %s: status %q is not done or failed", p.Key, p.Status)
	case strings.TrimSpace(p.Who) == "":
		return nil, fmt.Errorf("resolve %s: who is empty; say who decided", p.Key)
	}
	// A person's decision changes a done entry: no process may replay
	// the old one from its cache.
	defer l.replays.forget(p.Key)
	var out *ledger.Entry
	err := l.write(ctx, func(tx *sql.Tx, now time.Time) error {
		e, err := getEntry(ctx, tx, p.Key)
		if err != nil {
			return err
		}
		if e.LeaseLive(now) {
			return ledger.ErrBusy
		}
		if e.Status == ledger.Done && p.Status == ledger.Failed && !p.Force {
			return ledger.ErrDone
		}
		ref := p.Ref.Over(e.Ref)
		if p.Status == ledger.Failed {
			ref = ledger.Ref{}
		}
		res, err := tx.ExecContext(ctx, `UPDATE entries SET status = ?, outcome = 'resolved',
			ref_number = ?, ref_id = ?, ref_url = ?, ref_sha = ?, ref_text = ?,
			owner_id = '', owner_host = '', owner_pid = 0, lease_until = NULL, updated_at = ?
			WHERE key = ? AND fence = ?`,
			string(p.Status), ref.Number, ref.ID, ref.URL, ref.SHA, ref.Text, toNanos(now), p.Key, e.Fence)
		if err := oneRow(res, err); err != nil {
			return err
		}
		err = addTransition(ctx, tx, ledger.Transition{Key: p.Key, At: now, Owner: "person:" + p.Who, From: e.Status, To: p.Status, Fence: e.Fence, Why: p.Note})
		if err != nil {
			return err
		}
		out, err = getEntry(ctx, tx, p.Key)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", p.Key, err)
	}
	return out, nil
}

// Get implements ledger.Ledger.
func (l *Ledger) Get(ctx context.Context, key string) (*ledger.Entry, error) {
	e, err := getEntry(ctx, l.db, key)
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
	for _, f := range []struct{ col, val string }{
		{"task", p.Task}, {"repo", p.Repo}, {"kind", p.Kind}, {"status", string(p.Status)},
	} {
		if f.val != "" {
			where = append(where, f.col+" = ?")
			args = append(args, f.val)
		}
	}
	if !p.UpdatedBefore.IsZero() {
		where = append(where, "updated_at < ?")
		args = append(args, toNanos(p.UpdatedBefore))
	}
	q := "SELECT " + entryColumns + " FROM entries"
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at, key"
	if p.Limit > 0 {
		q += " LIMIT ?"
		args = append(args, p.Limit)
	}
	rows, err := l.db.QueryContext(ctx, q, args...)
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
	rows, err := l.db.QueryContext(ctx, `SELECT key, at, owner, from_status, to_status, fence, why
		FROM transitions WHERE key = ? ORDER BY id`, key)
	if err != nil {
		return nil, fmt.Errorf("history %s: %w", key, l.dbErr(err))
	}
	defer rows.Close()
	out := []ledger.Transition{}
	for rows.Next() {
		var (
			t        ledger.Transition
			at       int64
			from, to string
		)
		if err := rows.Scan(&t.Key, &at, &t.Owner, &from, &to, &t.Fence, &t.Why); err != nil {
			return nil, fmt.Errorf("history %s: %w", key, l.dbErr(err))
		}
		t.At, t.From, t.To = fromNanos(at), ledger.Status(from), ledger.Status(to)
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
	err := l.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("get meta %s: %w", name, ledger.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("get meta %s: %w", name, l.dbErr(err))
	}
	return v, nil
}

// PutMeta implements ledger.Ledger.
func (l *Ledger) PutMeta(ctx context.Context, name, value string, ifAbsent bool) (bool, error) {
	if name == "" {
		return false, errors.New("put meta: name is empty")
	}
	q := `INSERT INTO meta (name, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`
	if ifAbsent {
		q = `INSERT INTO meta (name, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`
	}
	wrote := false
	err := l.write(ctx, func(tx *sql.Tx, now time.Time) error {
		res, err := tx.ExecContext(ctx, q, name, value, toNanos(now))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		wrote = n > 0
		return err
	})
	if err != nil {
		return false, fmt.Errorf("put meta %s: %w", name, l.dbErr(err))
	}
	return wrote, nil
}

// putOrigin records how a new ledger was made (see ledger.MetaOrigin).
func putOrigin(ctx context.Context, tx *sql.Tx, origin, createdBy string, now time.Time) error {
	for name, value := range map[string]string{ledger.MetaOrigin: origin, ledger.MetaCreatedAt: now.Format(time.RFC3339Nano), ledger.MetaCreatedBy: createdBy} {
		if value == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO meta (name, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`, name, value, toNanos(now)); err != nil {
			return err
		}
	}
	return nil
}
