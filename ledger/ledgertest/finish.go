package ledgertest

// Finishing an attempt: done, verifiable, the last error, payloads, renewals.

import (
	"bytes"
	"errors"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

func testFinishDone(h *harness) {
	pa := params("k", "a")
	h.claim(pa, ledger.ClaimCreated)
	h.clock.Advance(3 * time.Second)
	ref := ledger.Ref{Number: 42, ID: 1 << 40, URL: "https://github.com/octo/repo/pull/42", SHA: "0123456789abcdef0123456789abcdef01234567", Text: "ok ✓"}
	e := h.finish(ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Done, Outcome: "found", Ref: ref, Why: "found by marker"})
	want := created(pa, h.start)
	want.Status, want.Outcome, want.Ref = ledger.Done, "found", ref
	want.Owner, want.LeaseUntil = ledger.Owner{}, time.Time{}
	want.UpdatedAt = h.start.Add(3 * time.Second)
	h.same("done entry", e, want)
	h.same("Get after done", h.get("k"), want)
}

// A Verifiable finish may skip forcing the record to disk, and nothing
// else: readers see it at once, its history is written, and the fence
// still guards it. A replay after it is done.
func testFinishVerifiable(h *harness) {
	pa := params("k", "a")
	h.claim(pa, ledger.ClaimCreated)
	h.clock.Advance(time.Second)
	if _, err := h.l.Finish(h.ctx, ledger.FinishParams{Key: "k", Fence: 2, Status: ledger.Done, Outcome: "created", Why: "stale", Verifiable: true}); !errors.Is(err, ledger.ErrFenced) {
		h.t.Errorf("Verifiable Finish under a wrong fence: err = %v, want ErrFenced", err)
	}
	ref := ledger.Ref{Number: 9, URL: "https://github.com/octo/repo/pull/9"}
	e := h.finish(ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Done, Outcome: "created", Ref: ref, Why: "created", Verifiable: true})
	want := created(pa, h.start)
	want.Status, want.Outcome, want.Ref = ledger.Done, "created", ref
	want.Owner, want.LeaseUntil = ledger.Owner{}, time.Time{}
	want.UpdatedAt = h.start.Add(time.Second)
	h.same("done entry", e, want)
	h.same("Get after a Verifiable done", h.get("k"), want)
	h.checkHistory("k", []ledger.Transition{
		{Key: "k", At: h.start, Owner: "run-a", To: ledger.Attempting, Fence: 1, Why: "claim by a"},
		{Key: "k", At: h.start.Add(time.Second), Owner: "run-a", From: ledger.Attempting, To: ledger.Done, Fence: 1, Why: "created"},
	})
	c := h.claim(params("k", "b"), ledger.ClaimDone)
	h.same("replay after a Verifiable done", c.Entry, want)
}

func testLastError(h *harness) {
	if h.lockOnly {
		h.t.Skip("a LockOnly backend keeps no error text")
	}
	h.claim(params("k", "a"), ledger.ClaimCreated)
	h.finish(ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Attempting, Error: "connection reset", Why: "release"})
	c := h.claim(params("k", "b"), ledger.ClaimAcquired)
	if c.Entry.LastError != "connection reset" {
		h.t.Errorf("LastError after acquire = %q, want it kept", c.Entry.LastError)
	}
	// Done with no Error clears the last error.
	e := h.finish(ledger.FinishParams{Key: "k", Fence: 2, Status: ledger.Done, Outcome: "created", Ref: ledger.Ref{ID: 9}, Why: "ok"})
	if e.LastError != "" {
		h.t.Errorf("LastError after done = %q, want it cleared", e.LastError)
	}
	// Done with an Error keeps that Error.
	h.claim(params("k2", "a"), ledger.ClaimCreated)
	e = h.finish(ledger.FinishParams{Key: "k2", Fence: 1, Status: ledger.Done, Outcome: "created", Error: "label not added", Why: "ok"})
	if e.LastError != "label not added" {
		h.t.Errorf("LastError after done with error = %q, want %q", e.LastError, "label not added")
	}
}

func testPayload(h *harness) {
	pa := params("k", "a")
	h.claim(pa, ledger.ClaimCreated)
	h.clock.Advance(lease)
	pb := params("k", "b")
	c := h.claim(pb, ledger.ClaimAcquired)
	if !bytes.Equal(h.kept(c.Entry).Payload, h.kept(&ledger.Entry{Payload: pa.Payload}).Payload) || c.Entry.PayloadHash != pa.PayloadHash {
		h.t.Errorf("payload after acquire = %q (%s), want the first %q (%s)", c.Entry.Payload, c.Entry.PayloadHash, pa.Payload, pa.PayloadHash)
	}
	h.clock.Advance(time.Second)
	err := h.l.SetPayload(h.ctx, ledger.PayloadParams{Key: "k", Fence: 2, Payload: pb.Payload, PayloadHash: pb.PayloadHash, Why: "nothing was created; send the new payload"})
	if err != nil {
		h.t.Fatalf("SetPayload: %v", err)
	}
	want := *c.Entry
	want.Payload, want.PayloadHash = pb.Payload, pb.PayloadHash
	want.UpdatedAt = h.clock.Now()
	h.same("after SetPayload", h.get("k"), &want)
	h.checkHistory("k", []ledger.Transition{
		{Key: "k", At: h.start, Owner: "run-a", To: ledger.Attempting, Fence: 1, Why: "claim by a"},
		{Key: "k", At: h.start.Add(lease), Owner: "run-b", From: ledger.Attempting, To: ledger.Attempting, Fence: 2, Why: "claim by b"},
		{Key: "k", At: h.clock.Now(), Owner: "run-b", From: ledger.Attempting, To: ledger.Attempting, Fence: 2, Why: "nothing was created; send the new payload"},
	})

	// The replaced payload is what the next acquirer finds.
	h.clock.Advance(lease)
	c = h.claim(params("k", "c"), ledger.ClaimAcquired)
	if !bytes.Equal(h.kept(c.Entry).Payload, h.kept(&ledger.Entry{Payload: pb.Payload}).Payload) || c.Entry.PayloadHash != pb.PayloadHash {
		h.t.Errorf("payload after second acquire = %q, want the replaced %q", c.Entry.Payload, pb.Payload)
	}
}

func testRenew(h *harness) {
	h.claim(params("k", "a"), ledger.ClaimCreated)
	h.clock.Advance(50 * time.Second)
	renewedAt := h.clock.Now()
	if err := h.l.Renew(h.ctx, "k", 1, lease); err != nil {
		h.t.Fatalf("Renew: %v", err)
	}
	e := h.get("k")
	if !e.LeaseUntil.Equal(renewedAt.Add(lease)) {
		h.t.Errorf("LeaseUntil after Renew = %v, want %v", e.LeaseUntil, renewedAt.Add(lease))
	}
	if e.Fence != 1 || e.Status != ledger.Attempting || h.kept(e).Owner != h.kept(&ledger.Entry{Owner: owner("a")}).Owner {
		h.t.Errorf("Renew changed more than the lease: %+v", e)
	}
	if n := len(h.history("k")); n != 1 {
		h.t.Errorf("history after Renew has %d transitions, want 1", n)
	}
	// Past the first lease, before the renewed one: still held.
	h.clock.Advance(lease - 50*time.Second + 10*time.Second)
	h.claim(params("k", "b"), ledger.ClaimBusy)
	// At the renewed end: dead.
	h.clock.Advance(renewedAt.Add(lease).Sub(h.clock.Now()))
	h.claim(params("k", "b"), ledger.ClaimAcquired)
	wantErr(h.t, "Renew by the old owner", h.l.Renew(h.ctx, "k", 1, lease), ledger.ErrFenced)
}
