package ledgertest

// A person's Resolve of busy, done and failed entries.

import (
	"time"

	"github.com/ghonce/ghonce/ledger"
)

func testResolveBusy(h *harness) {
	a := h.claim(params("k", "a"), ledger.ClaimCreated)
	h.clock.Advance(time.Second)
	for _, st := range []ledger.Status{ledger.Done, ledger.Failed} {
		_, err := h.l.Resolve(h.ctx, ledger.ResolveParams{Key: "k", Status: st, Ref: ledger.Ref{Number: 3}, Who: "alice", Note: "too early"})
		wantErr(h.t, "Resolve "+string(st)+" under a live lease", err, ledger.ErrBusy)
	}
	_, err := h.l.Resolve(h.ctx, ledger.ResolveParams{Key: "k", Status: ledger.Done, Who: "alice", Note: "forced", Force: true})
	wantErr(h.t, "Resolve done, forced, under a live lease", err, ledger.ErrBusy)
	h.unchanged("refused Resolve", "k", a.Entry, 1)

	// A person who knows no attempt runs (a claim someone else wrote, a
	// machine that is gone) clears it: the holder's writes are fenced off.
	e, err := h.l.Resolve(h.ctx, ledger.ResolveParams{Key: "k", Status: ledger.Failed, Who: "alice", Note: "forged", Force: true})
	if err != nil || e.Status != ledger.Failed || e.Owner != (ledger.Owner{}) || !e.LeaseUntil.IsZero() {
		h.t.Fatalf("Resolve --retry --force under a live lease = %+v, %v; want failed, lease cleared", e, err)
	}
	_, err = h.l.Finish(h.ctx, ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Done, Outcome: "created", Why: "late"})
	wantErr(h.t, "the holder's done after a forced retry", err, ledger.ErrFenced)
	h.claim(params("k", "b"), ledger.ClaimAcquired)
}

func testResolveDone(h *harness) {
	pa := params("k", "a")
	h.claim(pa, ledger.ClaimCreated)
	h.clock.Advance(lease + time.Minute) // a died
	now := h.clock.Now()
	ref := ledger.Ref{Number: 7, URL: "https://github.com/octo/repo/pull/7"}
	e, err := h.l.Resolve(h.ctx, ledger.ResolveParams{Key: "k", Status: ledger.Done, Ref: ref, Who: "alice", Note: "PR 7 is the one"})
	if err != nil {
		h.t.Fatalf("Resolve: %v", err)
	}
	want := created(pa, h.start)
	want.Status, want.Outcome, want.Ref = ledger.Done, "resolved", ref
	want.Owner, want.LeaseUntil = ledger.Owner{}, time.Time{}
	want.UpdatedAt = now
	h.same("resolved entry", e, want)
	h.same("Get after Resolve", h.get("k"), want)
	h.checkHistory("k", []ledger.Transition{
		{Key: "k", At: h.start, Owner: "run-a", To: ledger.Attempting, Fence: 1, Why: "claim by a"},
		{Key: "k", At: now, Owner: "person:alice", From: ledger.Attempting, To: ledger.Done, Fence: 1, Why: "PR 7 is the one"},
	})
	h.claim(params("k", "b"), ledger.ClaimDone)

	// Resolving a done entry again keeps its artifact: the fields the new
	// Ref leaves zero stay as they were.
	h.clock.Advance(time.Second)
	e, err = h.l.Resolve(h.ctx, ledger.ResolveParams{Key: "k", Status: ledger.Done, Ref: ledger.Ref{Text: "checked by hand"}, Who: "bob", Note: "confirmed"})
	if err != nil {
		h.t.Fatalf("Resolve done again: %v", err)
	}
	if want := h.kept(&ledger.Entry{Ref: ledger.Ref{Number: 7, URL: ref.URL, Text: "checked by hand"}}).Ref; h.kept(e).Ref != want || h.kept(h.get("k")).Ref != want {
		h.t.Errorf("ref after resolving a done entry again = %+v, want %+v", e.Ref, want)
	}
}

func testResolveFailed(h *harness) {
	h.claim(params("k", "a"), ledger.ClaimCreated)
	// A released entry has no live lease: a person may settle it at once.
	h.finish(ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Attempting, Error: "unknown", Why: "release"})
	h.clock.Advance(time.Second)
	e, err := h.l.Resolve(h.ctx, ledger.ResolveParams{Key: "k", Status: ledger.Failed, Who: "bob", Note: "nothing on GitHub; retry"})
	if err != nil {
		h.t.Fatalf("Resolve failed: %v", err)
	}
	if e.Status != ledger.Failed || !e.LeaseUntil.IsZero() || e.Owner != (ledger.Owner{}) || e.Outcome != "resolved" {
		h.t.Errorf("resolved to failed: status %q, lease %v, owner %+v, outcome %q; want failed, zero, zero, resolved", e.Status, e.LeaseUntil, e.Owner, e.Outcome)
	}
	c := h.claim(params("k", "b"), ledger.ClaimAcquired)
	if c.Prior != ledger.Failed || c.Entry.Fence != 2 {
		h.t.Errorf("claim after Resolve failed: prior %q, fence %d; want failed, 2", c.Prior, c.Entry.Fence)
	}

	// A done entry is sent back to failed only with Force (the artifact
	// was deleted); without, nothing changes.
	h.claim(params("d", "a"), ledger.ClaimCreated)
	done := h.finish(ledger.FinishParams{Key: "d", Fence: 1, Status: ledger.Done, Outcome: "created", Ref: ledger.Ref{Number: 1}, Why: "ok"})
	_, err = h.l.Resolve(h.ctx, ledger.ResolveParams{Key: "d", Status: ledger.Failed, Who: "bob", Note: "oops"})
	wantErr(h.t, "Resolve done entry to failed without Force", err, ledger.ErrDone)
	h.unchanged("refused Resolve", "d", done, 2)
	e, err = h.l.Resolve(h.ctx, ledger.ResolveParams{Key: "d", Status: ledger.Failed, Who: "bob", Note: "PR was deleted", Force: true})
	if err != nil {
		h.t.Fatalf("Resolve done entry to failed: %v", err)
	}
	if e.Status != ledger.Failed {
		h.t.Errorf("status = %q, want failed", e.Status)
	}
	h.claim(params("d", "b"), ledger.ClaimAcquired)
}
