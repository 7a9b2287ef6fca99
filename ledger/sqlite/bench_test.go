package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/ledgertest"
)

// The ledger benchmarks run at two sizes: a ledger of about a thousand
// entries, and one of a million, generated once and kept in
// $TMPDIR/ghonce-bench-1m-vN.db (N the schema version) so that later runs
// reuse it (delete it to generate it again; one whose schema is not this
// package's, left by an older ghonce, is generated again). `-short` skips
// the million.
var benchSizes = []struct {
	name    string
	entries int
}{
	{"entries=1k", 1_000},
	{"entries=1M", 1_000_000},
}

// benchKey is a key shaped like a real one (taskkey: random-looking base32
// after "gk1_"), so the primary-key index is filled in random order as it is
// in use.
func benchKey(prefix string, i int) string {
	h := sha256.Sum256([]byte(prefix + strconv.Itoa(i)))
	return "gk1_" + hex.EncodeToString(h[:14])
}

// benchLedger opens a ledger of the given size. The small one is made in the
// benchmark's temp directory; the big one is generated once (see benchSizes).
func benchLedger(b *testing.B, entries int) *Ledger {
	b.Helper()
	ctx := context.Background()
	var path string
	if entries < 100_000 {
		path = filepath.Join(b.TempDir(), "ledger.db")
		l, err := Open(ctx, path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := fillLedger(ctx, l, entries); err != nil {
			b.Fatal(err)
		}
		l.Close()
	} else {
		if testing.Short() {
			b.Skip("skipping the million-entry ledger in -short mode")
		}
		var err error
		if path, err = bigLedger(ctx, entries); err != nil {
			b.Fatal(err)
		}
		if err := warm(path); err != nil {
			b.Fatal(err)
		}
	}
	l, err := Open(ctx, path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	return l
}

// warm reads the file at path once, so that its pages are in the operating
// system's cache, as they are on a machine that uses the ledger: without it
// the figures of the big ledger depend on how much of a file generated in
// an earlier run the machine has since dropped from its cache (each claim
// then waits for the disk to read a few random B-tree leaves).
func warm(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// bigLedger returns the path of the cached ledger of n entries, generating
// it under a temporary name and renaming it into place when it is complete.
func bigLedger(ctx context.Context, n int) (string, error) {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("ghonce-bench-%dk-v%d.db", n/1000, SchemaVersion))
	if n == 1_000_000 {
		path = filepath.Join(os.TempDir(), fmt.Sprintf("ghonce-bench-1m-v%d.db", SchemaVersion))
	}
	if _, err := os.Stat(path); err == nil {
		same, err := sameSchema(ctx, path)
		if err != nil {
			return "", err
		}
		if same {
			return path, nil
		}
		// Made by an older ghonce of the same schema version (one still in
		// development): opening it would migrate it, not fill what this
		// schema's rows carry.
		if err := os.Remove(path); err != nil {
			return "", fmt.Errorf("remove the stale cached ledger: %w", err)
		}
	}
	tmp := path + ".generating"
	for _, p := range []string{tmp, tmp + "-wal", tmp + "-shm"} {
		os.Remove(p)
	}
	l, err := Open(ctx, tmp, Options{})
	if err != nil {
		return "", err
	}
	if err := fillLedger(ctx, l, n); err != nil {
		l.Close()
		return "", err
	}
	if err := l.Close(); err != nil { // checkpoints the WAL into the file
		return "", err
	}
	return path, os.Rename(tmp, path)
}

// sameSchema reports whether the ledger at path has the schema a new
// ledger gets, table by table and index by index, read without opening it
// as a ledger (which would migrate it).
func sameSchema(ctx context.Context, path string) (bool, error) {
	schema := func(path string) (string, error) {
		db, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
		if err != nil {
			return "", err
		}
		defer db.Close()
		var version int
		var s string
		err = db.QueryRowContext(ctx, `SELECT (SELECT user_version FROM pragma_user_version),
			coalesce(group_concat(type || ' ' || name || ': ' || coalesce(sql, ''), char(10)), '')
			FROM (SELECT * FROM sqlite_master ORDER BY type, name)`).Scan(&version, &s)
		return fmt.Sprintf("version %d\n%s", version, s), err
	}
	fresh := filepath.Join(os.TempDir(), fmt.Sprintf("ghonce-bench-schema-%d.db", os.Getpid()))
	defer func() {
		for _, p := range []string{fresh, fresh + "-wal", fresh + "-shm"} {
			os.Remove(p)
		}
	}()
	l, err := Open(ctx, fresh, Options{})
	if err != nil {
		return false, err
	}
	if err := l.Close(); err != nil {
		return false, err
	}
	want, err := schema(fresh)
	if err != nil {
		return false, fmt.Errorf("read a new ledger's schema: %w", err)
	}
	got, err := schema(path)
	if err != nil {
		return false, nil // not readable as SQLite: generate it again
	}
	return got == want, nil
}

// fillLedger adds n done entries, each with the two transitions a real one
// has, in one transaction generated inside SQLite.
func fillLedger(ctx context.Context, l *Ledger, n int) error {
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA cache_size = -262144"); err != nil { // 256 MiB, for this connection only
		return err
	}
	now := time.Now().UnixNano()
	stmts := []string{
		`CREATE TEMP TABLE gen AS WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < ?)
		 SELECT i, 'gk1_' || lower(hex(randomblob(14))) AS key FROM c`,
		`INSERT INTO entries (id, key, task, step, kind, repo, target, payload, payload_hash, status, outcome,
		 ref_number, ref_url, fence, attempts, created_at, updated_at, history_len)
		 SELECT i, key, 'task-' || (i / 10), 'pr-create', 'pr', 'octo/repo', 'main',
		 CAST('{"title":"Fix the frobnicator","body":"A body of a typical pull request."}' AS BLOB), lower(hex(randomblob(32))),
		 'done', 'created', i, 'https://github.com/octo/repo/pull/' || i, 1, 1, ? + i * 1000, ? + i * 1000 + 500, 2 FROM gen`,
		`INSERT INTO transitions (entry_id, seq, key, at, owner, from_status, to_status, fence, why)
		 SELECT i, 1, key, ? + i * 1000, 'gen', '', 'attempting', 1, 'run' FROM gen`,
		`INSERT INTO transitions (entry_id, seq, key, at, owner, from_status, to_status, fence, why)
		 SELECT i, 2, key, ? + i * 1000 + 500, 'gen', 'attempting', 'done', 1, 'created' FROM gen`,
		`DROP TABLE gen`,
	}
	args := [][]any{{n}, {now, now}, {now}, {now}, nil}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for i, q := range stmts {
		if _, err := tx.ExecContext(ctx, q, args[i]...); err != nil {
			return fmt.Errorf("generate ledger: %w", err)
		}
	}
	return tx.Commit()
}

var benchClaim = ledgertest.BenchClaim

// claimFinish is one side effect's ledger cost: a claim that creates the
// entry (forced: one fsync of the WAL) and a finish that marks it done.
func claimFinish(b *testing.B, l *Ledger, verifiable bool) {
	ctx := context.Background()
	run := strconv.FormatInt(time.Now().UnixNano(), 36) // new keys on every run of a reused ledger
	i := 0
	for b.Loop() {
		key := benchKey(run, i)
		i++
		if err := ledgertest.BenchAction(ctx, l, benchClaim(key), verifiable); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkClaimFinish is a fresh action as the engine records it for a
// GitHub kind: the claim is forced to disk, the done record (Verifiable) is
// not. Compare it with BenchmarkFdatasync of the same run.
func BenchmarkClaimFinish(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			l := benchLedger(b, sz.entries)
			claimFinish(b, l, true)
			b.ReportMetric(1, "fsyncs/op")
		})
	}
}

// BenchmarkClaimMarkFinish is a fresh action that creates, with the
// sending mark the engine writes, forced, before the create leaves (so a
// taker knows a request may be in flight): one fsync more than
// BenchmarkClaimFinish, on the small ledger. The taker's wait it enables
// is paid only on a takeover.
func BenchmarkClaimMarkFinish(b *testing.B) {
	l := benchLedger(b, benchSizes[0].entries)
	ctx := context.Background()
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	i := 0
	for b.Loop() {
		key := benchKey(run, i)
		i++
		if err := ledgertest.BenchCreate(ctx, l, benchClaim(key)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2, "fsyncs/op")
}

// BenchmarkClaimFinishUnsynced is BenchmarkClaimFinish with no fsync at
// all (synchronous=OFF, never used outside benchmarks): the part of a fresh
// action that is CPU and system calls, SQLite's checkpoints included. At
// both sizes, so that the growth of BenchmarkClaimFinish splits into what
// the CPU adds and what the fsyncs add.
func BenchmarkClaimFinishUnsynced(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			l := benchLedger(b, sz.entries)
			l.unsynced = true
			claimFinish(b, l, true)
			b.ReportMetric(0, "fsyncs/op")
		})
	}
}

// BenchmarkClaimFinishForced is a fresh action whose done record is forced
// too: a guarded command without --check, which has nothing to look at
// after a lost record.
func BenchmarkClaimFinishForced(b *testing.B) {
	l := benchLedger(b, benchSizes[0].entries)
	claimFinish(b, l, false)
	b.ReportMetric(2, "fsyncs/op")
}

// BenchmarkClaimDone is a re-run finding its step done, in a process that
// has seen the entry before: the replay cache, validated by PRAGMA
// data_version; no write lock, no fsync.
func BenchmarkClaimDone(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			l := benchLedger(b, sz.entries)
			ctx := context.Background()
			key := benchKey("done", int(time.Now().UnixNano()))
			if err := ledgertest.BenchAction(ctx, l, benchClaim(key), false); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				c, err := l.Claim(ctx, benchClaim(key))
				if err != nil || c.State != ledger.ClaimDone {
					b.Fatalf("claim: %v, %v", c, err)
				}
			}
		})
	}
}

// BenchmarkClaimDoneFirst is the replay of a done entry that this process
// has not read before (a new CLI process): the cache misses and the entry is
// read from the file. Each op reads a different one of the ledger's done
// entries.
func BenchmarkClaimDoneFirst(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			l := benchLedger(b, sz.entries)
			ctx := context.Background()
			rows, err := l.db.QueryContext(ctx, "SELECT key FROM entries WHERE status = 'done' ORDER BY random() LIMIT 10000")
			if err != nil {
				b.Fatal(err)
			}
			var keys []string
			for rows.Next() {
				var k string
				if err := rows.Scan(&k); err != nil {
					b.Fatal(err)
				}
				keys = append(keys, k)
			}
			rows.Close()
			i := 0
			for b.Loop() {
				l.replays.forget(keys[i%len(keys)])
				c, err := l.Claim(ctx, benchClaim(keys[i%len(keys)]))
				if err != nil || c.State != ledger.ClaimDone {
					b.Fatalf("claim: %v, %v", c, err)
				}
				i++
			}
		})
	}
}

// BenchmarkClaimFinishVsFdatasync measures the fresh action and its floor
// in turn, one of each per iteration, so that on a shared machine both meet
// the same load: it reports the mean of each and their ratio (ns/op is the
// fresh action alone; the floor is timed with the benchmark timer stopped).
func BenchmarkClaimFinishVsFdatasync(b *testing.B) {
	l := benchLedger(b, benchSizes[0].entries)
	f, buf := floorFile(b)
	ctx := context.Background()
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	var action, floor time.Duration
	i := 0
	for b.Loop() {
		key := benchKey(run, i)
		i++
		start := time.Now()
		if err := ledgertest.BenchAction(ctx, l, benchClaim(key), true); err != nil {
			b.Fatal(err)
		}
		action += time.Since(start)
		b.StopTimer()
		start = time.Now()
		syncFloor(b, f, buf, i)
		floor += time.Since(start)
		b.StartTimer()
	}
	b.ReportMetric(float64(action)/float64(i), "action-ns")
	b.ReportMetric(float64(floor)/float64(i), "fdatasync-ns")
	b.ReportMetric(float64(action)/float64(floor), "ratio")
}

// BenchmarkSQLiteCommit is SQLite's own floor on this disk, beneath any
// schema: one small row inserted into a one-table WAL database and committed
// with synchronous=FULL, through the same driver. Between it and
// BenchmarkFdatasync lies what SQLite itself adds; between it and
// BenchmarkClaimFinish what the ledger's rows, indexes and history add.
func BenchmarkSQLiteCommit(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "floor.db")
	db, err := sql.Open("sqlite3", "file:"+path+"?_synchronous=FULL&_journal_mode=WAL&_stmt_cache_size=8")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE TABLE t (id INTEGER PRIMARY KEY, v BLOB NOT NULL)"); err != nil {
		b.Fatal(err)
	}
	v := make([]byte, 100)
	for b.Loop() {
		if _, err := db.ExecContext(ctx, "INSERT INTO t (v) VALUES (?)", v); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFdatasync is the floor under BenchmarkClaimFinish: one 4 KiB
// write and fdatasync of a file on the same disk (the directory the
// benchmark ledgers live in), the least a durable commit can cost.
func BenchmarkFdatasync(b *testing.B) {
	f, buf := floorFile(b)
	i := 0
	for b.Loop() {
		i++
		syncFloor(b, f, buf, i)
	}
}

// walFramesPerClaim is how many WAL frames a claim's fdatasync flushes on a
// ledger of a thousand entries, measured as the WAL's growth over 80
// actions: about 9 for the claim itself (its row at the end of the table,
// the leaf of its key's index, four other index leaves, its history row,
// and page 1 whenever the file grows by a page) and 3 left by the unforced
// done record before it.
const walFramesPerClaim = 12

// BenchmarkFdatasyncWALFrames is the floor of the claim's forced write as
// SQLite lays it out: walFramesPerClaim frames of a 24-byte header and a
// 4 KiB page, each written with two pwrite calls at a moving offset of a
// WAL-sized file, then one fdatasync. Between it and BenchmarkFdatasync
// lies what the WAL's format costs; between it and BenchmarkClaimFinish
// the CPU of the two transactions and the checkpoints.
func BenchmarkFdatasyncWALFrames(b *testing.B) {
	const walSize = 4 << 20 // a WAL of SQLite's default autocheckpoint, 1,000 pages
	f, err := os.CreateTemp(os.TempDir(), "ghonce-fdatasync-wal-*")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close(); os.Remove(f.Name()) })
	if _, err := f.WriteAt(make([]byte, walSize), 0); err != nil {
		b.Fatal(err)
	}
	if err := fdatasync(f); err != nil {
		b.Fatal(err)
	}
	hdr, page := make([]byte, 24), make([]byte, 4096)
	off := int64(32)
	for b.Loop() {
		for range walFramesPerClaim {
			if off+4120 > walSize {
				off = 32
			}
			page[0]++
			if _, err := f.WriteAt(hdr, off); err != nil {
				b.Fatal(err)
			}
			if _, err := f.WriteAt(page, off+24); err != nil {
				b.Fatal(err)
			}
			off += 4120
		}
		if err := fdatasync(f); err != nil {
			b.Fatal(err)
		}
	}
}

// floorFile makes the floor's file in $TMPDIR, beside the benchmark ledgers,
// with its first 4 KiB block written and synced.
func floorFile(b *testing.B) (*os.File, []byte) {
	f, err := os.CreateTemp(os.TempDir(), "ghonce-fdatasync-*")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { f.Close(); os.Remove(f.Name()) })
	buf := make([]byte, 4096)
	syncFloor(b, f, buf, 0)
	return f, buf
}

// syncFloor is the floor: one 4 KiB write at offset 0 and fdatasync.
func syncFloor(b *testing.B, f *os.File, buf []byte, i int) {
	buf[0] = byte(i)
	if _, err := f.WriteAt(buf, 0); err != nil {
		b.Fatal(err)
	}
	if err := fdatasync(f); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOpenReplay is the ledger's share of a CLI replay (one process,
// one command): open the file, answer a claim of a done key, close.
func BenchmarkOpenReplay(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "ledger.db")
	l, err := Open(ctx, path, Options{})
	if err != nil {
		b.Fatal(err)
	}
	c, err := l.Claim(ctx, benchClaim("k"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := l.Finish(ctx, ledger.FinishParams{Key: "k", Fence: c.Entry.Fence, Status: ledger.Done, Why: "bench"}); err != nil {
		b.Fatal(err)
	}
	l.Close()
	for b.Loop() {
		l, err := Open(ctx, path, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if c, err := l.Claim(ctx, benchClaim("k")); err != nil || c.State != ledger.ClaimDone {
			b.Fatalf("claim: %v, %v", c, err)
		}
		if err := l.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// A cached benchmark ledger whose schema is not this package's (written by
// an older ghonce under the same name) is generated again, not reused.
func TestBigLedgerRegeneratesAStaleCache(t *testing.T) {
	ctx := context.Background()
	t.Setenv("TMPDIR", t.TempDir())
	path, err := bigLedger(ctx, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := bigLedger(ctx, 2000); err != nil || again != path {
		t.Fatalf("second bigLedger = %s, %v; want the cached %s", again, err, path)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	// The header of a ledger of the schema before.
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion-1)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if same, err := sameSchema(ctx, path); err != nil || same {
		t.Fatalf("sameSchema of a schema-%d ledger: %v, %v; want false", SchemaVersion-1, same, err)
	}
	if again, err := bigLedger(ctx, 2000); err != nil || again != path {
		t.Fatalf("bigLedger over a stale cache = %s, %v; want %s generated again", again, err, path)
	}
	if same, err := sameSchema(ctx, path); err != nil || !same {
		t.Fatalf("the regenerated ledger's schema is this package's: %v, %v; want true", same, err)
	}
	l, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var n int
	if err := l.db.QueryRow("SELECT count(*) FROM entries").Scan(&n); err != nil || n != 2000 {
		t.Fatalf("the regenerated ledger has %d entries (%v), want 2000", n, err)
	}
}
