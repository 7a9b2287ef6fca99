package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	sqlite3 "github.com/mattn/go-sqlite3"
)

// wconn is the one connection a process writes on, used through the driver
// rather than database/sql: a write is a handful of statements, and
// database/sql's per-transaction and per-statement machinery (a goroutine
// watching each context, argument conversion, a pool) cost more than
// SQLite's own work for them. Statements are prepared once and kept.
//
// The connection runs with synchronous=NORMAL: a commit reaches the
// operating system but SQLite does not fsync the WAL for it. A write that
// must be durable before it returns is made so by syncWAL, one fdatasync of
// the WAL after the commit (see the package doc). SQLite still fsyncs the
// WAL and the file around each checkpoint, so a checkpoint never loses what
// the WAL held.
//
// A wconn is used only under Ledger.writer.
type wconn struct {
	c     *sqlite3.SQLiteConn
	stmts map[string]*sqlite3.SQLiteStmt
	// row is reused by the one-row reads: an entry, its id and history length.
	row []driver.Value
}

// openWConn opens the writer connection on the ledger at path.
func openWConn(path, synchronous string) (*wconn, error) {
	// The read pool's settings, with synchronous NORMAL (or OFF, for the
	// benchmarks that split a write's cost); transactions are begun
	// explicitly, so _txlock does not apply.
	dc, err := (&sqlite3.SQLiteDriver{}).Open(dsnWith(path, false, synchronous))
	if err != nil {
		return nil, err
	}
	w := &wconn{c: dc.(*sqlite3.SQLiteConn), stmts: make(map[string]*sqlite3.SQLiteStmt), row: make([]driver.Value, entryWidth+2)}
	err = checkPragmas(synchronous, func(pragma string) (int64, error) {
		v := w.row[:1]
		ok, err := w.queryRow("PRAGMA "+pragma, v)
		if err == nil && !ok {
			err = fmt.Errorf("PRAGMA %s returned nothing", pragma)
		}
		n, _ := v[0].(int64)
		return n, err
	})
	if err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// stmt returns q prepared on this connection.
func (w *wconn) stmt(q string) (*sqlite3.SQLiteStmt, error) {
	if s, ok := w.stmts[q]; ok {
		return s, nil
	}
	ds, err := w.c.Prepare(q)
	if err != nil {
		return nil, err
	}
	s := ds.(*sqlite3.SQLiteStmt)
	w.stmts[q] = s
	return s, nil
}

// run runs q, a statement that returns no rows.
func (w *wconn) run(q string, args []driver.Value) (driver.Result, error) {
	s, err := w.stmt(q)
	if err != nil {
		return nil, err
	}
	return s.Exec(args)
}

// exec runs q and returns how many rows it changed.
func (w *wconn) exec(q string, args ...driver.Value) (int64, error) {
	res, err := w.run(q, args)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// insert runs q, an INSERT, and returns the row id of the row it made.
func (w *wconn) insert(q string, args ...driver.Value) (int64, error) {
	res, err := w.run(q, args)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// queryRow runs q and reads its first row into dest, reporting whether
// there was one.
func (w *wconn) queryRow(q string, dest []driver.Value, args ...driver.Value) (bool, error) {
	s, err := w.stmt(q)
	if err != nil {
		return false, err
	}
	rows, err := s.Query(args)
	if err != nil {
		return false, err
	}
	err = rows.Next(dest)
	cerr := rows.Close()
	if errors.Is(err, io.EOF) {
		return false, cerr
	}
	if err != nil {
		return false, err
	}
	return true, cerr
}

// begin starts a transaction: "BEGIN IMMEDIATE" takes the write lock at
// once (waiting up to BusyTimeout for another process's), "BEGIN" only
// reads until its first write.
func (w *wconn) begin(ctx context.Context, how string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	_, err := w.exec(how)
	return err
}

func (w *wconn) commit() error {
	_, err := w.exec("COMMIT")
	return err
}

// rollback ends the open transaction, if any, without its changes.
func (w *wconn) rollback() {
	if !w.c.AutoCommit() {
		w.exec("ROLLBACK") //nolint:errcheck // nothing better to do; the next BEGIN reports a broken connection
	}
}

func (w *wconn) close() error {
	for _, s := range w.stmts {
		s.Close()
	}
	w.stmts = nil
	return w.c.Close()
}

// walSync makes a committed write durable: one fdatasync of the ledger's
// WAL, where the commit's frames are. It opens the file by name each time:
// the writer connection is open, and SQLite removes a WAL only when the last
// connection to the ledger closes, so the name holds the WAL this connection
// wrote to. The first time a process syncs a WAL file (a new one, say, after
// every process had closed the ledger) it also syncs the directory, so the
// file's name is as durable as its content, as SQLite does for a WAL it
// creates.
type walSync struct {
	path   string      // the WAL's path
	synced os.FileInfo // the WAL file whose directory entry is synced
	n      int         // how many syncs, for the tests
}

func (s *walSync) sync() error {
	f, err := os.Open(s.path)
	if err != nil {
		return fmt.Errorf("sync the WAL: %w", err)
	}
	defer f.Close()
	if err := fdatasync(f); err != nil {
		return fmt.Errorf("sync the WAL %s: %w", s.path, err)
	}
	s.n++
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("sync the WAL %s: %w", s.path, err)
	}
	if s.synced != nil && os.SameFile(fi, s.synced) {
		return nil
	}
	if err := syncDir(filepath.Dir(s.path)); err != nil {
		return fmt.Errorf("sync the directory of the WAL %s: %w", s.path, err)
	}
	s.synced = fi
	return nil
}
