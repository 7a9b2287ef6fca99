// Package sqlitetest helps tests of the SQLite ledger imitate what a crash
// of the machine leaves on disk.
package sqlitetest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ghonce/ghonce/ledger"
)

// PowerLoss copies the ledger at path as a crash of the machine could leave
// it: the main file as it is, and the WAL cut back to walSize bytes, its
// length after the last write that was forced to disk. (Frames written
// after it may not have reached the disk; this keeps none of them, the
// worst case.) The -shm file is not copied: SQLite rebuilds it from the WAL
// after a crash. It returns the path of the copy, in dir.
func PowerLoss(t testing.TB, path string, walSize int64, dir string) string {
	t.Helper()
	out := filepath.Join(dir, filepath.Base(path))
	copyFile(t, path, out, -1)
	copyFile(t, path+"-wal", out+"-wal", walSize)
	return out
}

// WALSize is the length of path's WAL file now (0 if there is none).
func WALSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path + "-wal")
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func copyFile(t testing.TB, from, to string, n int64) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	var r io.Reader = in
	if n >= 0 {
		r = io.LimitReader(in, n)
	}
	if _, err := io.Copy(out, r); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// Mark is a ledger that notes the WAL length of the ledger file at Path
// after every claim that wrote: a claim is forced to disk, so everything up
// to there survives a crash of the machine, and what the run wrote after it
// (the renewal, the done record) may not.
type Mark struct {
	ledger.Ledger
	T    testing.TB
	Path string
	// At is the WAL's length after the last claim that wrote.
	At int64
	// DoneVerifiable is whether the last done record was marked Verifiable
	// (not forced to disk); nil until one is written.
	DoneVerifiable *bool
}

func (m *Mark) Finish(ctx context.Context, p ledger.FinishParams) (*ledger.Entry, error) {
	if p.Status == ledger.Done {
		v := p.Verifiable
		m.DoneVerifiable = &v
	}
	return m.Ledger.Finish(ctx, p)
}

func (m *Mark) Claim(ctx context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	c, err := m.Ledger.Claim(ctx, p)
	if err == nil && (c.State == ledger.ClaimCreated || c.State == ledger.ClaimAcquired) {
		m.At = WALSize(m.T, m.Path)
	}
	return c, err
}
