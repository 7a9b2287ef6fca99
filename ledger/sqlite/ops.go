package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/ghonce/ghonce/internal/crashpoint"
	"github.com/ghonce/ghonce/ledger"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// entryColumns is the column list entryFrom reads, in its order.
const entryColumns = `key, task, step, kind, repo, target, payload, payload_hash,
	status, outcome, ref_number, ref_id, ref_url, ref_sha, ref_text,
	owner_id, owner_host, owner_pid, lease_until, fence, attempts, last_error,
	created_at, updated_at, owner_boot, owner_pidns, owner_start,
	sending_at, sending_boot, sending_pidns, sending_pid, sending_start`

// entryWidth is the number of entryColumns.
const entryWidth = 32

type scanner interface{ Scan(dest ...any) error }

// scanEntry reads an entry from a database/sql row of entryColumns.
func scanEntry(s scanner) (*ledger.Entry, error) {
	var vals [entryWidth]any
	var ptrs [entryWidth]any
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := s.Scan(ptrs[:]...); err != nil {
		return nil, err
	}
	row := make([]driver.Value, entryWidth)
	for i, v := range vals {
		row[i] = v
	}
	return entryFrom(row)
}

// entryFrom builds an entry from the values of one row of entryColumns, as
// the driver returns them (int64, string or []byte, nil for NULL).
func entryFrom(v []driver.Value) (*ledger.Entry, error) {
	if len(v) != entryWidth {
		return nil, fmt.Errorf("read entry: %d columns, want %d", len(v), entryWidth)
	}
	d := decoder{v: v}
	e := &ledger.Entry{
		Key: d.str(0), Task: d.str(1), Step: d.str(2), Kind: d.str(3), Repo: d.str(4), Target: d.str(5),
		Payload: d.bytes(6), PayloadHash: d.str(7), Status: ledger.Status(d.str(8)), Outcome: d.str(9),
		Ref:   ledger.Ref{Number: int(d.int(10)), ID: d.int(11), URL: d.str(12), SHA: d.str(13), Text: d.str(14)},
		Owner: ledger.Owner{ID: d.str(15), Host: d.str(16), PID: int(d.int(17))},
		Fence: d.int(19), Attempts: int(d.int(20)), LastError: d.str(21),
		CreatedAt: fromNanos(d.int(22)), UpdatedAt: fromNanos(d.int(23)),
	}
	if v[18] != nil {
		e.LeaseUntil = fromNanos(d.int(18))
	}
	e.Owner.Boot, e.Owner.PIDNS, e.Owner.Start = d.str(24), uint64(d.int(25)), uint64(d.int(26))
	if v[27] != nil {
		e.Sending.At = fromNanos(d.int(27))
	}
	e.Sending.Proc = ledger.Proc{Boot: d.str(28), PIDNS: uint64(d.int(29)), PID: int(d.int(30)), Start: uint64(d.int(31))}
	if d.err != nil {
		return nil, fmt.Errorf("read entry %s: %w", e.Key, d.err)
	}
	return e, nil
}

// decoder reads typed values out of a row, remembering the first value of
// an unexpected type.
type decoder struct {
	v   []driver.Value
	err error
}

func (d *decoder) str(i int) string {
	switch x := d.v[i].(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	d.fail(i, "text")
	return ""
}

func (d *decoder) bytes(i int) []byte {
	switch x := d.v[i].(type) {
	case []byte:
		return append([]byte{}, x...)
	case string:
		return []byte(x)
	}
	d.fail(i, "a blob")
	return nil
}

func (d *decoder) int(i int) int64 {
	if x, ok := d.v[i].(int64); ok {
		return x
	}
	d.fail(i, "an integer")
	return 0
}

func (d *decoder) fail(i int, want string) {
	if d.err == nil {
		d.err = fmt.Errorf("column %d is %T, want %s", i+1, d.v[i], want)
	}
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

// stored is an entry as the writer reads it: with its row id, which its
// history rows are keyed by, and the length of its history, which numbers
// the next transition.
type stored struct {
	*ledger.Entry
	id         int64
	historyLen int64
}

// getEntryW is getEntry on the writer connection.
func getEntryW(w *wconn, key string) (stored, error) {
	ok, err := w.queryRow("SELECT "+entryColumns+", id, history_len FROM entries WHERE key = ?", w.row, key)
	if err != nil {
		return stored{}, err
	}
	if !ok {
		return stored{}, ledger.ErrNotFound
	}
	e, err := entryFrom(w.row[:entryWidth])
	if err != nil {
		return stored{}, err
	}
	id, ok1 := w.row[entryWidth].(int64)
	n, ok2 := w.row[entryWidth+1].(int64)
	if !ok1 || !ok2 {
		return stored{}, fmt.Errorf("read entry %s: id %T, history_len %T", key, w.row[entryWidth], w.row[entryWidth+1])
	}
	return stored{e, id, n}, nil
}

// addTransition appends t to the history of e, whose length the caller's
// write of the entry moves on by one (history_len = history_len + 1).
//
// (The number is read with the entry rather than searched for in the
// history: SQLite would plan such a search around the bound key and, since
// the driver clears bindings between runs, compile it again on every run.)
func addTransition(w *wconn, e stored, t ledger.Transition) error {
	_, err := w.exec(`INSERT INTO transitions (entry_id, seq, key, at, owner, from_status, to_status, fence, why)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.id, e.historyLen+1, t.Key, toNanos(t.At), t.Owner, string(t.From), string(t.To), t.Fence, t.Why)
	return err
}

// withWriter runs fn with the writer connection, opening it at the first
// write, while no other goroutine of this process writes.
func (l *Ledger) withWriter(ctx context.Context, fn func(w *wconn) error) error {
	if l.readOnly {
		return fmt.Errorf("ledger %s is open read-only", l.path)
	}
	select {
	case l.writer <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-l.writer }()
	if l.w == nil {
		mode := "NORMAL"
		if l.unsynced {
			mode = "OFF"
		}
		w, err := openWConn(l.path, mode)
		if err != nil {
			return fmt.Errorf("open the ledger %s for writing: %w", l.path, l.hint(err))
		}
		l.w = w
	}
	return fn(l.w)
}

// write runs fn in one BEGIN IMMEDIATE transaction, with now read once the
// write lock is held, and commits unless fn fails. A forced write is on disk
// before write returns (durable); the others reach the operating system
// only (see the package doc for which writes may be unforced).
func (l *Ledger) write(ctx context.Context, forced bool, fn func(w *wconn, now time.Time) error) error {
	return l.withWriter(ctx, func(w *wconn) error {
		return l.txn(ctx, w, "BEGIN IMMEDIATE", func(now time.Time) (bool, error) { return forced, fn(w, now) })
	})
}

// txn runs fn in one transaction on w begun with how ("BEGIN IMMEDIATE"
// takes the write lock at once, "BEGIN" at the first write), with now read
// after BEGIN, and commits unless fn fails. If fn says the commit must be
// forced, it is on disk before txn returns.
func (l *Ledger) txn(ctx context.Context, w *wconn, how string, fn func(now time.Time) (forced bool, err error)) error {
	if err := w.begin(ctx, how); err != nil {
		return l.dbErr(err)
	}
	defer w.rollback() // after a failure; a no-op after the commit
	forced, err := fn(l.now().UTC())
	if err != nil {
		return l.dbErr(err)
	}
	if err := w.commit(); err != nil {
		return l.dbErr(err)
	}
	if forced {
		return l.durable()
	}
	return nil
}

// durable makes the writes committed so far durable: one fdatasync of the
// WAL. A failure leaves the write committed, visible to every process, but
// perhaps not on disk.
func (l *Ledger) durable() error {
	if l.unsynced {
		return nil
	}
	if err := l.wal.sync(); err != nil {
		return fmt.Errorf("the write is recorded but may not be on disk: %w; check the disk that holds the ledger before running again", err)
	}
	return nil
}

// Claim implements ledger.Ledger.
func (l *Ledger) Claim(ctx context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var c *ledger.Claim
	err := l.withWriter(ctx, func(w *wconn) error {
		// A done entry this process has read before is answered from the
		// replay cache (replay.go).
		e, err := l.replays.lookup(w, p.Key)
		if err != nil {
			return l.dbErr(err)
		}
		if e != nil {
			c = &ledger.Claim{State: ledger.ClaimDone, Entry: e, Prior: e.Status, Now: l.now().UTC()}
			return nil
		}
		// Most claims of a known key find it done (a re-run) or busy
		// (another runner has it): a deferred transaction answers those
		// with a read, without the write lock, and takes the lock only to
		// write. If another process wrote since the read, SQLite refuses
		// the upgrade at once (SQLITE_BUSY); the claim then starts over
		// under BEGIN IMMEDIATE, which waits for the lock.
		c, err = l.claim(ctx, w, p, "BEGIN")
		if isBusy(err) {
			c, err = l.claim(ctx, w, p, "BEGIN IMMEDIATE")
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim %s: %w", p.Key, err)
	}
	return c, nil
}

// claim is one try of Claim, in a transaction begun with how. A claim that
// writes (the intent) is forced: it is on disk before any request leaves.
func (l *Ledger) claim(ctx context.Context, w *wconn, p ledger.ClaimParams, how string) (*ledger.Claim, error) {
	var c *ledger.Claim
	err := l.txn(ctx, w, how, func(now time.Time) (bool, error) {
		e, err := getEntryW(w, p.Key)
		switch {
		case errors.Is(err, ledger.ErrNotFound):
			c, err = create(w, now, p)
			return true, err
		case err != nil:
			return false, err
		}
		if c = ledger.Settled(e.Entry, now, p.TakeOverFence); c != nil {
			// Nothing to write: the read ends here.
			l.replays.put(e.Entry)
			c.Now = fromNanos(toNanos(now))
			return false, nil
		}
		c, err = acquire(w, now, e, p)
		return true, err
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && se.Code == sqlite3.ErrBusy
}

func create(w *wconn, now time.Time, p ledger.ClaimParams) (*ledger.Claim, error) {
	payload := p.Payload
	if payload == nil {
		payload = []byte{}
	}
	id, err := w.insert(`INSERT INTO entries (key, task, step, kind, repo, target,
		payload, payload_hash, status, owner_id, owner_host, owner_pid, lease_until,
		fence, attempts, created_at, updated_at, history_len, owner_boot, owner_pidns, owner_start)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 1, ?, ?, 1, ?, ?, ?)`,
		p.Key, p.Task, p.Step, p.Kind, p.Repo, p.Target, payload, p.PayloadHash,
		string(ledger.Attempting), p.Owner.ID, p.Owner.Host, int64(p.Owner.PID), leaseEnd(now, p.Lease),
		toNanos(now), toNanos(now), p.Owner.Boot, int64(p.Owner.PIDNS), int64(p.Owner.Start))
	if err != nil {
		return nil, err
	}
	err = addTransition(w, stored{id: id}, ledger.Transition{Key: p.Key, At: now, Owner: p.Owner.ID, To: ledger.Attempting, Fence: 1, Why: p.Why})
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
	return &ledger.Claim{State: ledger.ClaimCreated, Entry: e, Now: at}, nil
}

func acquire(w *wconn, now time.Time, e stored, p ledger.ClaimParams) (*ledger.Claim, error) {
	n, err := w.exec(`UPDATE entries SET status = ?, fence = fence + 1, attempts = attempts + 1,
		owner_id = ?, owner_host = ?, owner_pid = ?, lease_until = ?, updated_at = ?, history_len = history_len + 1,
		owner_boot = ?, owner_pidns = ?, owner_start = ?
		WHERE key = ? AND fence = ?`,
		string(ledger.Attempting), p.Owner.ID, p.Owner.Host, int64(p.Owner.PID), leaseEnd(now, p.Lease), toNanos(now),
		p.Owner.Boot, int64(p.Owner.PIDNS), int64(p.Owner.Start), p.Key, e.Fence)
	if err := oneRow(n, err); err != nil {
		return nil, err
	}
	err = addTransition(w, e, ledger.Transition{Key: p.Key, At: now, Owner: p.Owner.ID, From: e.Status, To: ledger.Attempting, Fence: e.Fence + 1, Why: p.Why})
	if err != nil {
		return nil, err
	}
	after := *e.Entry // as the UPDATE left it
	after.Status, after.Fence, after.Attempts = ledger.Attempting, e.Fence+1, e.Attempts+1
	after.Owner, after.LeaseUntil, after.UpdatedAt = p.Owner, fromNanos(leaseEnd(now, p.Lease)), fromNanos(toNanos(now))
	return &ledger.Claim{State: ledger.ClaimAcquired, Entry: &after, Prior: e.Status, PriorUpdatedAt: e.UpdatedAt, Now: fromNanos(toNanos(now))}, nil
}

// oneRow checks that an UPDATE inside the write transaction changed exactly
// the row it was aimed at (n rows); anything else is a bug, not a race.
func oneRow(n int64, err error) error {
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
func held(w *wconn, key string, fence int64) (stored, error) {
	e, err := getEntryW(w, key)
	if err != nil {
		return stored{}, err
	}
	if err := ledger.Holds(e.Entry, fence); err != nil {
		return stored{}, err
	}
	return e, nil
}

// Finish implements ledger.Ledger.
func (l *Ledger) Finish(ctx context.Context, p ledger.FinishParams) (*ledger.Entry, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	// A record a rerun can read back from GitHub need not be forced: the
	// claim before it was, and losing this one costs a look-up.
	var out *ledger.Entry
	err := l.write(ctx, !p.Verifiable, func(w *wconn, now time.Time) error {
		e, err := held(w, p.Key, p.Fence)
		if err != nil {
			return err
		}
		// Every case gives up the lease; the WHERE clause repeats the fence
		// check that held made.
		var n int64
		switch p.Status {
		case ledger.Done:
			n, err = w.exec(`UPDATE entries SET status = ?, outcome = ?,
				ref_number = ?, ref_id = ?, ref_url = ?, ref_sha = ?, ref_text = ?,
				last_error = ?, owner_id = '', owner_host = '', owner_pid = 0, lease_until = NULL, updated_at = ?,
				history_len = history_len + 1, owner_boot = '', owner_pidns = 0, owner_start = 0, `+clearSending+`
				WHERE key = ? AND status = 'attempting' AND fence = ?`,
				string(ledger.Done), p.Outcome, int64(p.Ref.Number), p.Ref.ID, p.Ref.URL, p.Ref.SHA, p.Ref.Text,
				p.Error, toNanos(now), p.Key, p.Fence)
		default: // Failed, or Attempting to release the lease
			// A release (attempting) keeps the sending mark: what it
			// sent may still land.
			sending := ""
			if p.Status == ledger.Failed {
				sending = ", " + clearSending
			}
			n, err = w.exec(`UPDATE entries SET status = ?, last_error = ?,
				owner_id = '', owner_host = '', owner_pid = 0, lease_until = NULL, updated_at = ?,
				history_len = history_len + 1, owner_boot = '', owner_pidns = 0, owner_start = 0`+sending+`
				WHERE key = ? AND status = 'attempting' AND fence = ?`,
				string(p.Status), p.Error, toNanos(p.UpdatedAt(now)), p.Key, p.Fence)
		}
		if err := oneRow(n, err); err != nil {
			return err
		}
		err = addTransition(w, e, ledger.Transition{Key: p.Key, At: now, Owner: e.Owner.ID, From: e.Status, To: p.Status, Fence: p.Fence, Why: p.Why})
		if err != nil {
			return err
		}
		after := *e.Entry // as the UPDATE left it
		after.Status, after.LastError = p.Status, p.Error
		if p.Status == ledger.Done {
			after.Outcome, after.Ref = p.Outcome, p.Ref
		}
		after.Owner, after.LeaseUntil, after.UpdatedAt = ledger.Owner{}, time.Time{}, fromNanos(toNanos(p.UpdatedAt(now)))
		if p.Status != ledger.Attempting {
			after.Sending = ledger.Sending{}
		}
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
	if err := p.Validate(); err != nil {
		return err
	}
	payload := p.Payload
	if payload == nil {
		payload = []byte{}
	}
	status := ledger.Attempting
	if p.Done {
		status = ledger.Done
	}
	err := l.write(ctx, true, func(w *wconn, now time.Time) error {
		if p.Done {
			// A done entry's description changes: no replay may answer
			// with the old one from this process's cache.
			l.replays.forget(p.Key)
		}
		e, err := getEntryW(w, p.Key)
		if err != nil {
			return err
		}
		if err := p.Allows(e.Entry); err != nil {
			return err
		}
		n, err := w.exec(`UPDATE entries SET payload = ?, payload_hash = ?, updated_at = ?, history_len = history_len + 1
			WHERE key = ? AND status = ? AND fence = ?`,
			payload, p.PayloadHash, toNanos(now), p.Key, string(status), p.Fence)
		if err := oneRow(n, err); err != nil {
			return err
		}
		return addTransition(w, e, ledger.Transition{Key: p.Key, At: now, Owner: e.Owner.ID, From: e.Status, To: e.Status, Fence: p.Fence, Why: p.Why})
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
	if err := ledger.ValidateRenew(key, lease); err != nil {
		return err
	}
	err := l.write(ctx, false, func(w *wconn, now time.Time) error {
		if _, err := held(w, key, fence); err != nil {
			return err
		}
		n, err := w.exec(`UPDATE entries SET lease_until = ?, updated_at = ?
			WHERE key = ? AND status = 'attempting' AND fence = ?`,
			leaseEnd(now, lease), toNanos(now), key, fence)
		return oneRow(n, err)
	})
	if err != nil {
		return fmt.Errorf("renew %s: %w", key, err)
	}
	return nil
}

// Now implements ledger.Ledger: the clock the ledger was opened with (this
// machine's), as it stores times.
func (l *Ledger) Now(context.Context) (time.Time, error) { return fromNanos(toNanos(l.now())), nil }

// clearSending is the assignment that clears the sending mark.
const clearSending = `sending_at = NULL, sending_boot = '', sending_pidns = 0, sending_pid = 0, sending_start = 0`

// MarkSending implements ledger.Ledger. It is forced: the mark must be on
// disk before the create leaves.
func (l *Ledger) MarkSending(ctx context.Context, p ledger.SendingParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	err := l.write(ctx, true, func(w *wconn, now time.Time) error {
		if _, err := held(w, p.Key, p.Fence); err != nil {
			return err
		}
		n, err := w.exec(`UPDATE entries SET lease_until = ?, updated_at = ?, sending_at = ?,
			sending_boot = ?, sending_pidns = ?, sending_pid = ?, sending_start = ?
			WHERE key = ? AND status = 'attempting' AND fence = ?`,
			leaseEnd(now, p.Lease), toNanos(now), toNanos(now),
			p.Proc.Boot, int64(p.Proc.PIDNS), int64(p.Proc.PID), int64(p.Proc.Start), p.Key, p.Fence)
		return oneRow(n, err)
	})
	if err != nil {
		return fmt.Errorf("mark %s sending: %w", p.Key, err)
	}
	return nil
}

// Resolve implements ledger.Ledger. A resolved entry's outcome is
// "resolved"; its ref is what ledger.ResolveParams.Apply leaves.
func (l *Ledger) Resolve(ctx context.Context, p ledger.ResolveParams) (*ledger.Entry, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	var out *ledger.Entry
	err := l.write(ctx, true, func(w *wconn, now time.Time) error {
		// A person's decision changes a done entry: no replay may answer
		// with the old one from this process's cache.
		l.replays.forget(p.Key)
		e, err := getEntryW(w, p.Key)
		if err != nil {
			return err
		}
		ref, err := p.Apply(e.Entry, now)
		if err != nil {
			return err
		}
		n, err := w.exec(`UPDATE entries SET status = ?, outcome = 'resolved',
			ref_number = ?, ref_id = ?, ref_url = ?, ref_sha = ?, ref_text = ?,
			owner_id = '', owner_host = '', owner_pid = 0, lease_until = NULL, updated_at = ?,
			history_len = history_len + 1, owner_boot = '', owner_pidns = 0, owner_start = 0, `+clearSending+`
			WHERE key = ? AND fence = ?`,
			string(p.Status), int64(ref.Number), ref.ID, ref.URL, ref.SHA, ref.Text, toNanos(now), p.Key, e.Fence)
		if err := oneRow(n, err); err != nil {
			return err
		}
		err = addTransition(w, e, ledger.Transition{Key: p.Key, At: now, Owner: "person:" + p.Who, From: e.Status, To: p.Status, Fence: e.Fence, Why: p.Note})
		if err != nil {
			return err
		}
		after, err := getEntryW(w, p.Key)
		out = after.Entry
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

// listQuery is the query List runs for p, and its arguments.
func listQuery(p ledger.ListParams) (string, []any) {
	var (
		where []string
		args  []any
	)
	notDone := p.Status != "" && p.Status != ledger.Done
	repo := "repo"
	if notDone {
		// The entries not done are few, a repository's may be all of
		// them: the unary + keeps SQLite from choosing entries_by_repo.
		repo = "+repo"
	}
	for _, f := range []struct{ col, val string }{
		{"task", p.Task}, {repo, p.Repo}, {"kind", p.Kind}, {"status", string(p.Status)},
	} {
		if f.val != "" {
			where = append(where, f.col+" = ?")
			args = append(args, f.val)
		}
	}
	if notDone {
		// Spelled out so that SQLite sees the query needs only the
		// entries in the partial index entries_not_done.
		where = append(where, "status <> 'done'")
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
	return q, args
}

// List implements ledger.Ledger. A Limit of zero or less means no limit.
func (l *Ledger) List(ctx context.Context, p ledger.ListParams) ([]*ledger.Entry, error) {
	q, args := listQuery(p)
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
		FROM transitions WHERE entry_id = (SELECT id FROM entries WHERE key = ?) ORDER BY seq`, key)
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
	if err := ledger.ValidateMetaName(name); err != nil {
		return false, err
	}
	q := `INSERT INTO meta (name, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`
	if ifAbsent {
		q = `INSERT INTO meta (name, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`
	}
	wrote := false
	err := l.write(ctx, true, func(w *wconn, now time.Time) error {
		n, err := w.exec(q, name, value, toNanos(now))
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
