package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite/sqlitetest"
)

// A done record marked Verifiable is visible at once, but a crash of the
// machine may lose it: the entry then reads attempting under its old fence,
// and the next claim takes it over (a rerun then asks GitHub). The claim
// itself is never lost.
func TestUnforcedDoneMayBeLostWithTheMachine(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	l := open(t, path, Options{})
	c, err := l.Claim(ctx, claimParams("k", "a"))
	if err != nil {
		t.Fatal(err)
	}
	durable := sqlitetest.WALSize(t, path) // the claim was forced: everything so far is on disk
	if _, err := l.Finish(ctx, ledger.FinishParams{Key: "k", Fence: c.Entry.Fence, Status: ledger.Done, Outcome: "created",
		Ref: ledger.Ref{Number: 7}, Why: "created", Verifiable: true}); err != nil {
		t.Fatal(err)
	}
	if sqlitetest.WALSize(t, path) <= durable {
		t.Fatalf("the done record added nothing to the WAL (%d bytes, %d before)", sqlitetest.WALSize(t, path), durable)
	}
	// Another handle (another process) sees it at once.
	other := open(t, path, Options{})
	if e, err := other.Get(ctx, "k"); err != nil || e.Status != ledger.Done || e.Ref.Number != 7 {
		t.Fatalf("another handle reads %+v, %v; want done with ref 7", e, err)
	}

	after := open(t, sqlitetest.PowerLoss(t, path, durable, t.TempDir()), Options{})
	e, err := after.Get(ctx, "k")
	if err != nil {
		t.Fatalf("after the power loss the claim is gone: %v", err)
	}
	if e.Status != ledger.Attempting || e.Fence != 1 || e.Owner.ID != "a" {
		t.Fatalf("after the power loss: status %s, fence %d, owner %q; want attempting, 1, a", e.Status, e.Fence, e.Owner.ID)
	}
	// The holder is gone with the machine; the rerun takes the entry over.
	p := claimParams("k", "b")
	p.TakeOverFence = 1
	if c, err := after.Claim(ctx, p); err != nil || c.State != ledger.ClaimAcquired || c.Prior != ledger.Attempting {
		t.Fatalf("claim after the power loss = %+v, %v; want acquired from attempting", c, err)
	}
}

// The replay cache of a long-lived handle never hides a person's decision
// made in another process: a done entry resolved back to failed elsewhere
// is claimable at the next Claim.
func TestReplayCacheSeesResolveElsewhere(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "ledger.db")
	server := open(t, path, Options{}) // a long-lived process (an MCP server, a library user)
	c, err := server.Claim(ctx, claimParams("k", "a"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.Finish(ctx, ledger.FinishParams{Key: "k", Fence: c.Entry.Fence, Status: ledger.Done, Outcome: "created", Why: "ok", Verifiable: true}); err != nil {
		t.Fatal(err)
	}
	for range 3 { // the first reads the file, the others come from the cache
		if c, err := server.Claim(ctx, claimParams("k", "a")); err != nil || c.State != ledger.ClaimDone {
			t.Fatalf("replay = %+v, %v; want done", c, err)
		}
	}
	person := open(t, path, Options{}) // `ghonce resolve k --retry --force`
	if _, err := person.Resolve(ctx, ledger.ResolveParams{Key: "k", Status: ledger.Failed, Who: "alice", Note: "the PR was deleted", Force: true}); err != nil {
		t.Fatal(err)
	}
	c, err = server.Claim(ctx, claimParams("k", "a"))
	if err != nil || c.State != ledger.ClaimAcquired || c.Prior != ledger.Failed {
		t.Fatalf("claim after a resolve elsewhere = %+v, %v; want acquired from failed", c, err)
	}
}

// The forced writes are exactly those the package doc lists: a claim that
// writes, SetPayload, Resolve, PutMeta and a Finish that is not Verifiable
// each sync the WAL once after their commit; a Verifiable Finish, a renewal
// and a claim that writes nothing (a replay, a busy key) sync nothing. The
// writer connection itself never fsyncs a commit (synchronous=NORMAL).
func TestForcedWrites(t *testing.T) {
	ctx := context.Background()
	l := open(t, filepath.Join(t.TempDir(), "ledger.db"), Options{})
	claim := func(key string) func() error {
		return func() error { _, err := l.Claim(ctx, claimParams(key, "o")); return err }
	}
	finish := func(key string, verifiable bool) func() error {
		return func() error {
			_, err := l.Finish(ctx, ledger.FinishParams{Key: key, Fence: 1, Status: ledger.Done, Why: "ok", Verifiable: verifiable})
			return err
		}
	}
	steps := []struct {
		what  string
		do    func() error
		syncs int
	}{
		{"claim of a new key", claim("a"), 1},
		{"claim of a key held by a live lease", func() error { _, err := l.Claim(ctx, claimParams("a", "other")); return err }, 0},
		{"renew", func() error { return l.Renew(ctx, "a", 1, time.Hour) }, 0},
		{"forced done", finish("a", false), 1},
		{"replay of a done key", claim("a"), 0},
		{"claim", claim("b"), 1},
		{"set payload", func() error {
			return l.SetPayload(ctx, ledger.PayloadParams{Key: "b", Fence: 1, Payload: []byte("{}"), PayloadHash: "h", Why: "edit"})
		}, 1},
		{"verifiable done", finish("b", true), 0},
		{"resolve", func() error {
			_, err := l.Resolve(ctx, ledger.ResolveParams{Key: "b", Status: ledger.Failed, Who: "alice", Force: true})
			return err
		}, 1},
		{"put meta", func() error { _, err := l.PutMeta(ctx, "n", "v", false); return err }, 1},
	}
	for _, s := range steps {
		before := l.wal.n
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		if got := l.wal.n - before; got != s.syncs {
			t.Errorf("%s synced the WAL %d times, want %d", s.what, got, s.syncs)
		}
	}
	v := l.w.row[:1]
	if ok, err := l.w.queryRow("PRAGMA synchronous", v); err != nil || !ok || v[0] != int64(1) {
		t.Errorf("the writer connection is synchronous=%v (%v), want 1 (NORMAL)", v[0], err)
	}
}
