// Package sqlite keeps the ghonce ledger in one SQLite file on the local
// machine, shared by every ghonce process on it.
//
// The file is opened in WAL mode. Each process writes on one connection of
// its own (wconn.go), under SQLite's write lock with a busy timeout, so
// processes that write at once queue for the file instead of failing. The
// file identifies itself with PRAGMA application_id; a file that is not a
// ghonce ledger is refused and never written to.
//
// # Durability: one forced write per action
//
// The writer connection commits with synchronous=NORMAL: a commit is
// written to the WAL, and so to the operating system, but SQLite does not
// fsync it. A write that must be on disk before it returns is forced by
// ghonce itself, with one fdatasync of the WAL right after the commit: the
// commit's frames, and any earlier unforced ones, are then on disk, and
// WAL recovery after a crash keeps them. (This is what synchronous=FULL
// does, with fdatasync instead of the fsync SQLite is built with here,
// which also writes the file's times through the file system's journal;
// BenchmarkSQLiteCommit against BenchmarkFdatasync shows what that costs.
// The first forced write of a process to a WAL file also syncs its
// directory, as SQLite does for a WAL it creates.) SQLite still fsyncs the
// WAL before and the file after each checkpoint, so a checkpoint never
// drops what the WAL held.
//
// A claim that writes (the intent) is forced: it is on disk before any
// request leaves for GitHub. So are SetPayload, Resolve, PutMeta, and a
// Finish that is not marked Verifiable.
//
// Renew, and a Finish marked ledger.FinishParams.Verifiable (a done or
// failed record whose outcome a rerun can read back from GitHub), are not
// forced. What that means after each kind of crash:
//
//   - The process dies (SIGKILL, panic, OOM): nothing is lost. The commit is
//     in the kernel's page cache and every later reader sees it.
//   - The machine dies (power loss, kernel panic) before the next forced
//     write: the last unforced commits may be lost, never a forced one, and
//     never out of order. WAL frames carry a running checksum, so recovery
//     keeps a prefix of the log, and the next forced write (a Claim, by any
//     process) syncs the whole WAL, earlier unforced frames included; a
//     checkpoint syncs it too. A lost done record leaves the entry
//     attempting under a dead owner: the next run takes it over, looks on
//     GitHub, finds the artifact and records it as found. It never creates
//     a second one. A lost Renew only shortens a lease whose holder died
//     with the machine.
//
// A guarded command without --check has nothing to look at, so the engine
// does not mark its Finish Verifiable: its done record stays forced, and a
// machine crash cannot turn a finished command into an exit 3 (or, with
// --on-unconfirmed retry, into a second run).
//
// # Replays
//
// A done entry is final unless a person resolves it again. Claim answers a
// replay of a done key from an in-process cache kept on the writer
// connection and validated on every call with PRAGMA data_version: any
// commit to the file by another connection, in this process or another,
// empties the cache, so a `ghonce resolve --retry` run elsewhere is seen by
// the very next Claim. A key not in the cache is read in a deferred
// transaction, which takes the write lock only if the claim writes.
package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/ghonce/ghonce/ledger"
	sqlite3 "github.com/mattn/go-sqlite3"
)

// BusyTimeout is how long one statement waits for another process's write
// transaction to end before it gives up with "database is locked". A ledger
// transaction lasts a few milliseconds (one fsync or two), so reaching this
// means a process is stuck holding the file.
const BusyTimeout = 10 * time.Second

// Options tunes Open. The zero value is a read-write ledger on the real clock.
type Options struct {
	// Now reads the clock; nil means time.Now. Every time the ledger stores
	// (leases, created and updated times, history) comes from it.
	Now func() time.Time
	// ReadOnly opens an existing ledger for reading: nothing is created,
	// initialised or migrated, and the methods that write fail.
	ReadOnly bool
	// MustExist opens an existing ledger read-write but never creates one:
	// a missing file (or directory) or an empty file is refused with an
	// error wrapping ledger.ErrNoLedger, and nothing is created on disk.
	MustExist bool
	// Origin is recorded (ledger.MetaOrigin) in the transaction that
	// initialises a new ledger, so the store itself says how it came to
	// be: ledger.OriginInit or ledger.OriginAction (empty means
	// ledger.OriginAction: whatever opened it was about to act).
	Origin string
	// CreatedBy is recorded with Origin (ledger.MetaCreatedBy) when not empty.
	CreatedBy string
}

// Ledger is a ledger.Ledger kept in one SQLite file.
type Ledger struct {
	db *sql.DB // reads, and the checks and migrations of Open
	// w is the one connection this process writes on (wconn.go), opened at
	// the first write and used only while writer is held. The replay
	// cache lives on it too: its PRAGMA data_version moves only when
	// another connection commits, never for this process's own writes.
	w        *wconn
	wal      walSync
	replays  replayCache
	path     string
	created  bool
	readOnly bool
	// mustExist: refuse to initialise an empty file (Options.MustExist).
	mustExist bool
	origin    string
	createdBy string
	now       func() time.Time
	// writer lets one write of this process run at a time, so goroutines
	// of one process wait here (and honour their context) rather than in
	// SQLite's sleeping busy handler. Other processes are kept apart by
	// SQLite's write lock and the busy timeout.
	writer chan struct{}
	// unsynced makes every write synchronous=OFF with no WAL sync: never
	// set outside this package's benchmarks, which use it to split a
	// write's cost into the part that is CPU and system calls and the part
	// that is fsync.
	unsynced bool
}

var _ ledger.Ledger = (*Ledger)(nil)

// Open opens the ledger at path, creating and initialising it if the file does
// not exist or is empty (unless opts.ReadOnly or opts.MustExist), and
// migrating an older schema. With MustExist a missing or empty file is
// refused with ledger.ErrNoLedger and nothing (file, directory, -wal, -shm)
// is created.
//
// A new file is created with mode 0600, and any missing parent directory with
// mode 0700. SQLite creates the -wal and -shm files beside it with the
// permission bits of the ledger file itself, so they are as private as it is.
//
// Open refuses, without writing to it, a path that is not a ghonce ledger
// (another program's database, a damaged file, a directory): the error wraps
// ledger.ErrNotLedger. A ledger written by a newer ghonce is refused with
// ledger.ErrNewerSchema. Errors name the file and say what to do. (A
// read-only Open that had SQLite look inside a WAL-mode file may leave empty
// -wal and -shm files beside it, which a read-only connection cannot remove;
// the file itself is never changed.)
func Open(ctx context.Context, path string, opts Options) (*Ledger, error) {
	if path == "" {
		return nil, errors.New("open ledger: the path is empty")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", path, err)
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if opts.MustExist && !opts.ReadOnly {
		if _, err := os.Stat(abs); errors.Is(err, fs.ErrNotExist) {
			return nil, noLedger(abs)
		}
	}
	if !opts.ReadOnly && !opts.MustExist {
		if err := makeDir(filepath.Dir(abs)); err != nil {
			return nil, fmt.Errorf("create ledger directory for %s: %w; check the permissions of its parent or choose another location", abs, err)
		}
		if err := createFile(abs); err != nil {
			return nil, fmt.Errorf("create ledger %s: %w; check the permissions of its directory or choose another location", abs, unpath(err, abs))
		}
	}
	// Look at the file before SQLite does: SQLite would happily use (and, on
	// first write, overwrite) anything, so a file that is plainly not a
	// ghonce ledger is turned away here.
	if err := inspectFile(abs); err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite3", dsn(abs, opts.ReadOnly))
	if err != nil {
		return nil, fmt.Errorf("open ledger %s: %w", abs, err)
	}
	// sql.Open connects to nothing yet, and the writer connection is opened
	// at the first write: a process that only reads never opens it.
	l := &Ledger{
		db:        db,
		wal:       walSync{path: abs + "-wal"},
		path:      abs,
		readOnly:  opts.ReadOnly,
		mustExist: opts.MustExist,
		origin:    cmp.Or(opts.Origin, ledger.OriginAction),
		createdBy: opts.CreatedBy,
		now:       now,
		writer:    make(chan struct{}, 1),
	}
	if err := l.setUpRetrying(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return l, nil
}

// setUpRetrying runs setUp, again while SQLite answers "busy" for at most
// BusyTimeout. Processes that open a new ledger at once meet in SQLite's
// deadlock avoidance: switching the file to WAL needs an exclusive lock,
// and SQLite answers SQLITE_BUSY at once, without waiting for the busy
// timeout, to a connection that holds a shared lock while another waits to
// write. Its statement has ended and released its locks by then, so a
// short pause and a new attempt get through.
func (l *Ledger) setUpRetrying(ctx context.Context) error {
	deadline := time.Now().Add(BusyTimeout)
	pause := time.Millisecond
	for {
		err := l.setUp(ctx)
		var se sqlite3.Error
		if err == nil || !errors.As(err, &se) || (se.Code != sqlite3.ErrBusy && se.Code != sqlite3.ErrLocked) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(pause + time.Duration(rand.Int64N(int64(pause))))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// Path returns the absolute path of the ledger file.
func (l *Ledger) Path() string { return l.path }

// Created reports whether this Open made the ledger: the file did not exist
// or was empty, and this Open wrote the schema into it. When several
// processes open a new path at once, exactly one of them sees true. A caller
// uses it to tell the user that the ledger is brand new, for instance
// because the old one was deleted.
func (l *Ledger) Created() bool { return l.created }

// Close closes the database. The last ghonce process to close a ledger
// checkpoints the WAL into the main file and removes the -wal and -shm files.
func (l *Ledger) Close() error {
	l.writer <- struct{}{} // wait for a write in flight
	var werr error
	if l.w != nil {
		werr = l.w.close()
		l.w = nil
	}
	l.replays.reset()
	<-l.writer
	if err := errors.Join(werr, l.db.Close()); err != nil {
		return fmt.Errorf("close ledger %s: %w", l.path, err)
	}
	return nil
}

// dsn builds the connection string of the read pool. database/sql opens
// connections as it needs them, and mattn/go-sqlite3 applies these settings
// to each one, in this order: busy_timeout first, then foreign_keys, then
// synchronous.
func dsn(path string, readOnly bool) string { return dsnWith(path, readOnly, "FULL") }

// dsnWith is dsn with the given synchronous mode.
func dsnWith(path string, readOnly bool, synchronous string) string {
	q := url.Values{}
	// mode=rw: SQLite opens the file Open created or found but never
	// creates one itself, so the file always has the mode Open gave it.
	// mode=ro for a read-only ledger.
	q.Set("mode", "rw")
	if readOnly {
		q.Set("mode", "ro")
	}
	// busy_timeout: wait up to BusyTimeout for another process's write lock
	// instead of failing with "database is locked". The driver sets it before
	// running anything else on the connection, so before any lock is taken.
	q.Set("_busy_timeout", strconv.FormatInt(BusyTimeout.Milliseconds(), 10))
	// foreign_keys: every transition must belong to an entry.
	q.Set("_foreign_keys", "1")
	// synchronous: FULL for the read pool, where only Open's migrations
	// write (SQLite fsyncs the WAL on each commit). The writer connection
	// is NORMAL and makes a forced write durable itself (wconn.go).
	q.Set("_synchronous", synchronous)
	// txlock=immediate: every transaction database/sql begins here (Open's
	// migrations) takes the write lock at BEGIN. A deferred transaction that
	// reads and then writes can fail with SQLITE_BUSY at once when another
	// process wrote in between, without waiting for the busy timeout.
	q.Set("_txlock", "immediate")
	// stmt_cache_size: keep the statements of the hot path prepared on each
	// connection; compiling them again costs more than running them.
	q.Set("_stmt_cache_size", "32")
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	return u.String()
}

// makeDir creates dir and any missing parents with mode 0700. Directories
// that exist are left as they are.
func makeDir(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: errors.New("a file of that name is in the way")}
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := makeDir(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another process made it meanwhile.
			return makeDir(dir)
		}
		return err
	}
	// Mkdir's mode passes through the umask; set it exactly.
	return os.Chmod(dir, 0o700)
}

// createFile creates path with mode 0600 if it does not exist, so the file
// never exists with looser permissions. An existing file is left alone.
func createFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	// The mode given to open passes through the umask; set it exactly.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Make the new directory entry durable, so a claim made in it does not
	// vanish with its file after a crash.
	return syncDir(filepath.Dir(path))
}

// unpath drops the path from an *fs.PathError about path, for a message
// that names it already.
func unpath(err error, path string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// notLedger is the error for a path that holds something other than a ghonce
// ledger.
func notLedger(path, why string) error {
	return fmt.Errorf("open ledger %s: %w: %s; move it aside or choose another location", path, ledger.ErrNotLedger, why)
}

// noLedger is the error for a ledger that does not exist where a caller
// must not create one.
func noLedger(path string) error {
	return fmt.Errorf("%w at %s; `ghonce init` creates one (or check the ledger's location)", ledger.ErrNoLedger, path)
}

func newerSchema(path string, version int64) error {
	return fmt.Errorf("open ledger %s: %w (schema version %d, this ghonce knows up to %d); upgrade ghonce", path, ledger.ErrNewerSchema, version, SchemaVersion)
}

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// inspectFile reads the SQLite header of path (see
// https://www.sqlite.org/fileformat.html) and refuses what cannot be a ghonce
// ledger. It accepts an empty file and any SQLite file that is a ghonce
// ledger or might be an empty database; setUp asks SQLite about those.
func inspectFile(path string) error {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("open ledger %s: %w; nothing has been recorded there yet", path, err)
	}
	if err != nil {
		return fmt.Errorf("open ledger %s: %w", path, err)
	}
	if fi.IsDir() {
		return notLedger(path, "it is a directory")
	}
	if !fi.Mode().IsRegular() {
		return notLedger(path, "it is not a regular file")
	}
	if n := linkCount(fi); n > 1 {
		// SQLite names the -wal and -shm files after the path it opened:
		// two processes opening one file by two names each get their own
		// and do not see each other's writes (nor their locks).
		return fmt.Errorf("open ledger %s: %d hard links: processes opening it by other names keep separate -wal/-shm and act twice; give all the same path (a symlink is fine)", path, n)
	}
	f, err := os.Open(path)
	if err != nil {
		err = unpath(err, path)
		if errors.Is(err, fs.ErrPermission) {
			return fmt.Errorf("open ledger %s: %w; give your user read and write access to it, or choose another location", path, err)
		}
		return fmt.Errorf("open ledger %s: %w", path, err)
	}
	defer f.Close()
	// The 100-byte database header, and the first 8 bytes of the b-tree
	// page header of page 1, the root of the schema table.
	var h [108]byte
	n, err := io.ReadFull(f, h[:])
	switch {
	case n == 0 && errors.Is(err, io.EOF):
		return nil // empty: a new ledger
	case errors.Is(err, io.ErrUnexpectedEOF):
		return notLedger(path, fmt.Sprintf("it is %d bytes long, too short for an SQLite database", n))
	case err != nil:
		return fmt.Errorf("read ledger %s: %w", path, err)
	}
	if string(h[:16]) != sqliteMagic {
		return notLedger(path, "it is not an SQLite database")
	}
	pageSize := int64(binary.BigEndian.Uint16(h[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	if pageSize < 512 || pageSize&(pageSize-1) != 0 {
		return notLedger(path, "its SQLite header is damaged")
	}
	if fi.Size()%pageSize != 0 {
		return notLedger(path, "its size is not a whole number of pages: it is truncated or damaged")
	}
	appID := int32(binary.BigEndian.Uint32(h[68:72]))
	if appID != 0 && appID != ApplicationID {
		return notLedger(path, fmt.Sprintf("it is another program's SQLite database (application_id %#x)", uint32(appID)))
	}
	// The header may lag behind the WAL, but a version only grows, so a
	// header that is already newer is reliably newer.
	version := int64(int32(binary.BigEndian.Uint32(h[60:64])))
	if appID == ApplicationID && version > SchemaVersion {
		return newerSchema(path, version)
	}
	// With no WAL content beside it, the file is the whole truth: a database
	// without ghonce's application_id that has a user_version or any schema
	// object is another program's, refused before SQLite opens it. (A new
	// ledger whose schema is still only in the WAL has no application_id in
	// the file yet; that case is left to setUp, which reads through the WAL.)
	if appID == 0 && !walPending(path) {
		leafPage, cells := h[100] == 0x0d, binary.BigEndian.Uint16(h[103:105])
		if version != 0 || !leafPage || cells != 0 {
			return notLedger(path, "it is another program's SQLite database (it has content but no ghonce application_id)")
		}
	}
	return nil
}

// walPending reports whether path may have committed content in its WAL file
// that the main file does not show yet. It errs towards true.
func walPending(path string) bool {
	fi, err := os.Stat(path + "-wal")
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	// An existing WAL of only a header (32 bytes) holds no transaction.
	return err != nil || fi.Size() > 32
}

// identity is what a database says about itself.
type identity struct {
	appID   int64
	version int64 // user_version
	objects int64 // tables, indexes, triggers and views
	tables  int64 // of ghonce's two tables, how many exist
}

func (id identity) empty() bool { return id.appID == 0 && id.version == 0 && id.objects == 0 }

type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// probe reads the identity of the database on q.
func (l *Ledger) probe(ctx context.Context, q querier) (identity, error) {
	// One statement, so one snapshot: read one by one, the three could
	// straddle another process's commit of a new ledger's schema.
	var id identity
	err := q.QueryRowContext(ctx, `SELECT
		(SELECT application_id FROM pragma_application_id),
		(SELECT user_version FROM pragma_user_version),
		(SELECT count(*) FROM sqlite_schema),
		(SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('entries', 'transitions'))`).Scan(&id.appID, &id.version, &id.objects, &id.tables)
	if err != nil {
		return id, l.openErr(err)
	}
	return id, nil
}

// check refuses a database that is neither empty nor a ledger this ghonce can use.
func (l *Ledger) check(id identity) error {
	switch {
	case id.empty():
		return nil
	case id.appID == ApplicationID && id.version > SchemaVersion:
		return newerSchema(l.path, id.version)
	case id.appID == ApplicationID && id.version >= 1:
		return nil
	case id.appID == ApplicationID:
		return notLedger(l.path, "its ghonce schema version is missing: it is damaged")
	default:
		return notLedger(l.path, fmt.Sprintf("it is another program's SQLite database (application_id %#x, %d tables, indexes or triggers)", uint32(id.appID), id.objects))
	}
}

// openErr wraps an error from SQLite met while opening the ledger.
func (l *Ledger) openErr(err error) error {
	var se sqlite3.Error
	if errors.As(err, &se) && (se.Code == sqlite3.ErrNotADB || se.Code == sqlite3.ErrCorrupt) {
		return notLedger(l.path, fmt.Sprintf("SQLite says %q: it is damaged", se.Error()))
	}
	return fmt.Errorf("open ledger %s: %w", l.path, l.hint(err))
}

// setUp checks the connection settings and the file's identity, switches a
// new ledger to WAL and brings the schema up to date.
func (l *Ledger) setUp(ctx context.Context) error {
	conn, err := l.db.Conn(ctx)
	if err != nil {
		return l.openErr(err)
	}
	defer conn.Close()

	err = checkPragmas("FULL", func(pragma string) (v int64, err error) {
		err = conn.QueryRowContext(ctx, "PRAGMA "+pragma).Scan(&v)
		return v, err
	})
	if err != nil {
		return l.openErr(err)
	}
	id, err := l.probe(ctx, conn)
	if err != nil {
		return err
	}
	if err := l.check(id); err != nil {
		return err
	}
	if l.readOnly {
		if id.empty() {
			return fmt.Errorf("open ledger %s: %w: the file is empty; nothing has been recorded there yet", l.path, fs.ErrNotExist)
		}
		if id.version < SchemaVersion {
			return fmt.Errorf("open ledger %s: schema version %d is older than this ghonce's %d; run a ghonce command that writes to the ledger once to upgrade it", l.path, id.version, SchemaVersion)
		}
	} else if l.mustExist && id.empty() {
		// An empty file is where a ledger would be created; a caller that
		// must not create one treats it as missing and leaves it alone.
		return noLedger(l.path)
	} else {
		// journal_mode=WAL is stored in the file, so it is set once here,
		// only on a file known to be a ghonce ledger or empty. Readers then
		// never block the writer, and a commit is one append and fsync of
		// the WAL. It is a no-op on a ledger that is already in WAL mode.
		var mode string
		if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode); err != nil {
			return l.openErr(err)
		}
		// Refuse before the schema is written in the wrong mode.
		if mode != "wal" {
			return l.notWAL(mode)
		}
		// A ledger at this ghonce's schema is left alone: a version only
		// grows, so it needs no migration, and the write lock that
		// migrate takes to find that out would cost every open.
		if id.appID != ApplicationID || id.version != SchemaVersion {
			created, err := l.migrate(ctx, conn)
			if err != nil {
				return err
			}
			// setUp may run again after a busy answer: a ledger it
			// created on an earlier try stays created.
			l.created = l.created || created
			if id, err = l.probe(ctx, conn); err != nil {
				return err
			}
		}
	}
	// Read the journal mode back: WAL cannot be used on some file systems
	// (network shares without shared memory), and SQLite then silently keeps
	// its rollback journal, under which readers and the writer block each
	// other. Refuse rather than run in a mode the ledger was not built for.
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return l.openErr(err)
	}
	if mode != "wal" {
		return l.notWAL(mode)
	}
	// A damaged schema shows here rather than in the first Claim.
	if id.tables != 2 {
		return notLedger(l.path, "its ghonce tables are missing: it is damaged")
	}
	return nil
}

func (l *Ledger) notWAL(mode string) error {
	return fmt.Errorf("open ledger %s: journal mode is %q, not \"wal\": the file system may not support SQLite's WAL mode; put the ledger on a local disk", l.path, mode)
}

// syncLevels are PRAGMA synchronous's values for the modes dsnWith takes.
var syncLevels = map[string]int64{"OFF": 0, "NORMAL": 1, "FULL": 2}

// checkPragmas reads back, with read, the per-connection settings dsnWith
// asks for, so a driver that ignored one is caught instead of trusted.
func checkPragmas(synchronous string, read func(pragma string) (int64, error)) error {
	for _, p := range []struct {
		name string
		want int64
	}{
		{"busy_timeout", BusyTimeout.Milliseconds()},
		{"foreign_keys", 1},
		{"synchronous", syncLevels[synchronous]},
	} {
		got, err := read(p.name)
		if err != nil {
			return err
		}
		if got != p.want {
			return fmt.Errorf("PRAGMA %s is %d, want %d", p.name, got, p.want)
		}
	}
	return nil
}

// migrate brings the schema to SchemaVersion in one immediate transaction. It
// reads the identity again under the write lock, so of several processes
// opening a new ledger at once one initialises it and the others find it
// done. It reports whether it initialised an empty database.
func (l *Ledger) migrate(ctx context.Context, conn *sql.Conn) (created bool, err error) {
	ms, err := loadMigrations()
	if err != nil {
		return false, err
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return false, l.openErr(err)
	}
	defer tx.Rollback()
	id, err := l.probe(ctx, tx)
	if err != nil {
		return false, err
	}
	if err := l.check(id); err != nil {
		return false, err
	}
	if id.version == SchemaVersion {
		return false, nil
	}
	for _, m := range ms[id.version:] {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return false, fmt.Errorf("migrate ledger %s to schema version %d (%s): %w", l.path, m.Version, m.Name, l.hint(err))
		}
	}
	if id.empty() {
		// In the transaction that creates the ledger, so a ledger never
		// exists without the record of how it was made.
		if err := putOrigin(ctx, tx, l.origin, l.createdBy, l.now().UTC()); err != nil {
			return false, fmt.Errorf("migrate ledger %s: record its origin: %w", l.path, l.hint(err))
		}
	}
	// PRAGMA takes no bound parameters; both values are constants.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d", ApplicationID)); err != nil {
		return false, fmt.Errorf("migrate ledger %s: %w", l.path, l.hint(err))
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion)); err != nil {
		return false, fmt.Errorf("migrate ledger %s: %w", l.path, l.hint(err))
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migrate ledger %s: %w", l.path, l.hint(err))
	}
	return id.empty(), nil
}

// hint adds what to do to the SQLite errors a user can act on.
func (l *Ledger) hint(err error) error {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return err
	}
	switch se.Code {
	case sqlite3.ErrFull:
		return fmt.Errorf("%w; free some disk space and run again", err)
	case sqlite3.ErrIoErr:
		return fmt.Errorf("%w; check the disk that holds the ledger (is it full, or read-only?)", err)
	case sqlite3.ErrReadonly, sqlite3.ErrCantOpen, sqlite3.ErrPerm:
		return fmt.Errorf("%w; check that you can write the ledger and its directory, or choose another location", err)
	case sqlite3.ErrBusy, sqlite3.ErrLocked:
		return fmt.Errorf("%w; another process held the ledger for more than %s", err, BusyTimeout)
	case sqlite3.ErrCorrupt, sqlite3.ErrNotADB:
		return fmt.Errorf("%w: %w; move it aside or choose another location", ledger.ErrNotLedger, err)
	}
	return err
}

// dbErr names the file in an error from SQLite met after Open.
func (l *Ledger) dbErr(err error) error {
	var se sqlite3.Error
	if !errors.As(err, &se) {
		return err
	}
	return fmt.Errorf("ledger %s: %w", l.path, l.hint(err))
}
