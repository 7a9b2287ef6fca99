package ledgertest

// Claims: creating, busy and done entries, leases, the ledger's clock, the
// sending mark, fences and takeovers, releases.

import (
	"bytes"
	"fmt"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

func testClaimCreates(h *harness) {
	p := params("k", "a")
	p.Payload = []byte(`{"title":"Fix the bug","body":"ünïcode ✓"}`)
	c := h.claim(p, ledger.ClaimCreated)
	if c.Prior != "" {
		h.t.Errorf("Prior = %q, want empty", c.Prior)
	}
	want := created(p, h.start)
	h.same("claim entry", c.Entry, want)
	h.same("Get", h.get("k"), want)
	if !c.Entry.LeaseLive(h.start) {
		h.t.Error("the new claim's lease is not live")
	}
	h.checkHistory("k", []ledger.Transition{
		{Key: "k", At: h.start, Owner: p.Owner.ID, From: "", To: ledger.Attempting, Fence: 1, Why: p.Why},
	})

	// An empty payload is stored as empty.
	p2 := params("k2", "a")
	p2.Payload, p2.PayloadHash = nil, ""
	c2 := h.claim(p2, ledger.ClaimCreated)
	if len(c2.Entry.Payload) != 0 || len(h.get("k2").Payload) != 0 {
		h.t.Errorf("empty payload stored as %q", h.get("k2").Payload)
	}
}

func testClaimBusy(h *harness) {
	a := h.claim(params("k", "a"), ledger.ClaimCreated)
	for _, d := range []time.Duration{0, 30 * time.Second, lease - time.Millisecond} {
		h.clock.Advance(d - (h.clock.Now().Sub(h.start)))
		c := h.claim(params("k", "b"), ledger.ClaimBusy)
		if c.Prior != ledger.Attempting {
			h.t.Errorf("busy claim at +%s: Prior = %q, want attempting", d, c.Prior)
		}
		h.same(fmt.Sprintf("busy claim at +%s: entry as found", d), c.Entry, a.Entry)
		h.unchanged(fmt.Sprintf("busy claim at +%s", d), "k", a.Entry, 1)
	}
}

func testClaimDone(h *harness) {
	h.claim(params("k", "a"), ledger.ClaimCreated)
	h.clock.Advance(time.Second)
	ref := ledger.Ref{Number: 12, URL: "https://github.com/octo/repo/pull/12"}
	done := h.finish(ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Done, Outcome: "created", Ref: ref, Why: "created"})
	h.clock.Advance(2 * lease)
	for _, p := range []ledger.ClaimParams{params("k", "a"), params("k", "b")} {
		c := h.claim(p, ledger.ClaimDone)
		if c.Prior != ledger.Done {
			h.t.Errorf("Prior = %q, want done", c.Prior)
		}
		h.same("done claim: entry as found", c.Entry, done)
	}
	take := params("k", "c")
	take.TakeOverFence = 1
	h.claim(take, ledger.ClaimDone)
	h.unchanged("claims of a done entry", "k", done, 2)
}

func testLeaseExpiry(h *harness) {
	pa := params("k", "a")
	h.claim(pa, ledger.ClaimCreated)
	h.clock.Advance(lease) // the lease ends now: dead
	now := h.clock.Now()
	pb := params("k", "b")
	pb.Lease = 2 * lease
	c := h.claim(pb, ledger.ClaimAcquired)
	if c.Prior != ledger.Attempting {
		h.t.Errorf("Prior = %q, want attempting", c.Prior)
	}
	if !c.PriorUpdatedAt.Equal(h.start) {
		h.t.Errorf("PriorUpdatedAt = %s, want the first claim's time %s", c.PriorUpdatedAt, h.start)
	}
	want := created(pa, h.start) // the payload is a's: b's is not stored
	want.Owner = pb.Owner
	want.LeaseUntil = now.Add(pb.Lease)
	want.Fence, want.Attempts = 2, 2
	want.UpdatedAt = now
	h.same("acquired entry", c.Entry, want)
	h.same("Get after acquire", h.get("k"), want)
	h.checkHistory("k", []ledger.Transition{
		{Key: "k", At: h.start, Owner: pa.Owner.ID, To: ledger.Attempting, Fence: 1, Why: pa.Why},
		{Key: "k", At: now, Owner: pb.Owner.ID, From: ledger.Attempting, To: ledger.Attempting, Fence: 2, Why: pb.Why},
	})
	// b's lease is live: a third runner is busy.
	h.claim(params("k", "c"), ledger.ClaimBusy)
}

// testClaimNow: every claim says what the ledger's clock read when it was
// judged, so that a caller computes ages on that clock and never on its
// own (the suite's clock is years away from the machine's).
func testClaimNow(h *harness) {
	if now, err := h.l.Now(h.ctx); err != nil || !now.Equal(h.start) {
		h.t.Errorf("Now() = %v, %v; want the ledger's clock %v", now, err, h.start)
	}
	pa := params("k", "a")
	c := h.claim(pa, ledger.ClaimCreated)
	if !c.Now.Equal(h.start) {
		h.t.Errorf("created: Now = %v, want the ledger's clock %v", c.Now, h.start)
	}
	h.clock.Advance(time.Second)
	if c := h.claim(params("k", "b"), ledger.ClaimBusy); !c.Now.Equal(h.clock.Now()) {
		h.t.Errorf("busy: Now = %v, want %v", c.Now, h.clock.Now())
	}
	h.clock.Advance(lease)
	c = h.claim(params("k", "b"), ledger.ClaimAcquired)
	if !c.Now.Equal(h.clock.Now()) {
		h.t.Errorf("acquired: Now = %v, want %v", c.Now, h.clock.Now())
	}
	h.finish(ledger.FinishParams{Key: "k", Fence: 2, Status: ledger.Done, Outcome: "created", Why: "ok"})
	h.clock.Advance(time.Second)
	if c := h.claim(params("k", "c"), ledger.ClaimDone); !c.Now.Equal(h.clock.Now()) {
		h.t.Errorf("done: Now = %v, want %v", c.Now, h.clock.Now())
	}
}

// testSending: the mark of a create about to leave is kept through a
// release and a later claim, with the supervisor's identity, and cleared
// by done, failed and a person's decision.
func testSending(h *harness) {
	pa := params("k", "a")
	h.claim(pa, ledger.ClaimCreated)
	h.clock.Advance(time.Second)
	sent := h.clock.Now()
	proc := ledger.Proc{Boot: "b00t", PIDNS: 4026531836, PID: 4242, Start: 987654}
	if err := h.l.MarkSending(h.ctx, ledger.SendingParams{Key: "k", Fence: 1, Lease: 2 * lease, Proc: proc}); err != nil {
		h.t.Fatalf("MarkSending: %v", err)
	}
	want := created(pa, h.start)
	want.UpdatedAt, want.LeaseUntil = sent, sent.Add(2*lease)
	want.Sending = ledger.Sending{At: sent, Proc: proc}
	h.same("after MarkSending", h.get("k"), want)
	if n := len(h.history("k")); n != 1 {
		h.t.Errorf("MarkSending appended a transition: history has %d, want 1", n)
	}
	err := h.l.MarkSending(h.ctx, ledger.SendingParams{Key: "k", Fence: 2, Lease: lease})
	wantErr(h.t, "MarkSending under a wrong fence", err, ledger.ErrFenced)
	err = h.l.MarkSending(h.ctx, ledger.SendingParams{Key: "nope", Fence: 1, Lease: lease})
	wantErr(h.t, "MarkSending of an unknown key", err, ledger.ErrNotFound)

	// A release keeps the mark; so does the next claim.
	h.clock.Advance(time.Second)
	if e := h.finish(ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Attempting, Why: "release"}); h.kept(e).Sending != h.kept(want).Sending {
		h.t.Errorf("release: Sending = %+v, want %+v", e.Sending, want.Sending)
	}
	c := h.claim(params("k", "b"), ledger.ClaimAcquired)
	if h.kept(c.Entry).Sending != h.kept(want).Sending || h.kept(h.get("k")).Sending != h.kept(want).Sending {
		h.t.Errorf("acquired: Sending = %+v (stored %+v), want %+v", c.Entry.Sending, h.get("k").Sending, want.Sending)
	}
	// A mark without a process (a request to GitHub) replaces it.
	h.clock.Advance(time.Second)
	if err := h.l.MarkSending(h.ctx, ledger.SendingParams{Key: "k", Fence: 2, Lease: lease}); err != nil {
		h.t.Fatal(err)
	}
	if got := h.get("k").Sending; got != (ledger.Sending{At: h.clock.Now()}) {
		h.t.Errorf("second mark: Sending = %+v, want at %v with no process", got, h.clock.Now())
	}
	// Failed clears it; so does done.
	if e := h.finish(ledger.FinishParams{Key: "k", Fence: 2, Status: ledger.Failed, Why: "refused"}); e.Sending != (ledger.Sending{}) || h.get("k").Sending != (ledger.Sending{}) {
		h.t.Errorf("failed: Sending = %+v, want none", h.get("k").Sending)
	}
	h.claim(params("k", "c"), ledger.ClaimAcquired)
	if err := h.l.MarkSending(h.ctx, ledger.SendingParams{Key: "k", Fence: 3, Lease: lease, Proc: proc}); err != nil {
		h.t.Fatal(err)
	}
	if e := h.finish(ledger.FinishParams{Key: "k", Fence: 3, Status: ledger.Done, Outcome: "created", Why: "ok"}); e.Sending != (ledger.Sending{}) || h.get("k").Sending != (ledger.Sending{}) {
		h.t.Errorf("done: Sending = %+v, want none", h.get("k").Sending)
	}
	// And a person's decision.
	h.claim(params("r", "a"), ledger.ClaimCreated)
	if err := h.l.MarkSending(h.ctx, ledger.SendingParams{Key: "r", Fence: 1, Lease: lease}); err != nil {
		h.t.Fatal(err)
	}
	h.finish(ledger.FinishParams{Key: "r", Fence: 1, Status: ledger.Attempting, Why: "release"})
	if _, err := h.l.Resolve(h.ctx, ledger.ResolveParams{Key: "r", Status: ledger.Failed, Who: "ops", Note: "did not run"}); err != nil {
		h.t.Fatal(err)
	}
	if got := h.get("r").Sending; got != (ledger.Sending{}) {
		h.t.Errorf("resolved: Sending = %+v, want none", got)
	}
}

// testClaimSending: a claim that creates its entry with ClaimParams.Sending
// either writes the mark at the claim's time (no process, no transition of
// its own) or ignores it, as the backend chooses; a claim that acquires
// an entry ignores it always and keeps the earlier attempt's mark.
func testClaimSending(h *harness) {
	p := params("k", "a")
	p.Sending = true
	c := h.claim(p, ledger.ClaimCreated)
	want := created(p, h.start)
	switch got := c.Entry.Sending; got {
	case ledger.Sending{}:
		// Ignored: the caller marks before it sends.
	case ledger.Sending{At: h.start}:
		want.Sending = got
	default:
		h.t.Fatalf("claim with the mark: Sending = %+v, want none or at the claim's time %v with no process", got, h.start)
	}
	h.same("claim with the mark", c.Entry, want)
	h.same("Get after the claim with the mark", h.get("k"), want)
	if n := len(h.history("k")); n != 1 {
		h.t.Errorf("the claim's mark appended a transition: history has %d, want 1", n)
	}
	// A release keeps it; a claim that acquires the entry keeps it too,
	// whatever it asks: the taker must wait out the earlier attempt's
	// window, not one of its own.
	h.clock.Advance(time.Second)
	h.finish(ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Attempting, Why: "release"})
	h.clock.Advance(time.Second)
	pb := params("k", "b")
	pb.Sending = true
	if got := h.claim(pb, ledger.ClaimAcquired).Entry.Sending; got != want.Sending || h.get("k").Sending != want.Sending {
		h.t.Errorf("acquired with the mark asked: Sending = %+v (stored %+v), want the earlier %+v", got, h.get("k").Sending, want.Sending)
	}
	// Done clears it, as any mark.
	if e := h.finish(ledger.FinishParams{Key: "k", Fence: 2, Status: ledger.Done, Outcome: "created", Why: "ok"}); e.Sending != (ledger.Sending{}) {
		h.t.Errorf("done: Sending = %+v, want none", e.Sending)
	}
	// A release that says nothing was sent clears the mark of the claim
	// that created the entry, and keeps the rest.
	p2 := params("u", "a")
	p2.Sending = true
	h.claim(p2, ledger.ClaimCreated)
	h.clock.Advance(time.Second)
	e := h.finish(ledger.FinishParams{Key: "u", Fence: 1, Status: ledger.Attempting, Why: "release", Unsent: true})
	if e.Sending != (ledger.Sending{}) || h.get("u").Sending != (ledger.Sending{}) || e.Status != ledger.Attempting || e.Owner.ID != "" {
		h.t.Errorf("unsent release: %+v (stored mark %+v); want attempting, released, no mark", e, h.get("u").Sending)
	}
}

func testStaleOwnerFenced(h *harness) {
	h.claim(params("k", "a"), ledger.ClaimCreated)
	h.clock.Advance(lease + time.Second)
	b := h.claim(params("k", "b"), ledger.ClaimAcquired)
	h.clock.Advance(time.Second)

	// a comes back from the dead: nothing it writes under fence 1 counts.
	for _, st := range []ledger.Status{ledger.Done, ledger.Failed, ledger.Attempting} {
		_, err := h.l.Finish(h.ctx, ledger.FinishParams{Key: "k", Fence: 1, Status: st, Outcome: "created", Ref: ledger.Ref{Number: 1}, Error: "late", Why: "stale"})
		wantErr(h.t, "stale Finish "+string(st), err, ledger.ErrFenced)
	}
	err := h.l.SetPayload(h.ctx, ledger.PayloadParams{Key: "k", Fence: 1, Payload: []byte("stale"), PayloadHash: "stale", Why: "stale"})
	wantErr(h.t, "stale SetPayload", err, ledger.ErrFenced)
	wantErr(h.t, "stale Renew", h.l.Renew(h.ctx, "k", 1, lease), ledger.ErrFenced)
	// A fence that was never issued is no better.
	_, err = h.l.Finish(h.ctx, ledger.FinishParams{Key: "k", Fence: 3, Status: ledger.Done, Why: "future"})
	wantErr(h.t, "Finish under a future fence", err, ledger.ErrFenced)
	h.unchanged("after stale writes", "k", b.Entry, 2)

	done := h.finish(ledger.FinishParams{Key: "k", Fence: 2, Status: ledger.Done, Outcome: "created", Ref: ledger.Ref{Number: 5}, Why: "ok"})
	// Finishing twice is fenced too: the entry is no longer attempting.
	_, err = h.l.Finish(h.ctx, ledger.FinishParams{Key: "k", Fence: 2, Status: ledger.Failed, Why: "again"})
	wantErr(h.t, "second Finish", err, ledger.ErrFenced)
	wantErr(h.t, "Renew after Finish", h.l.Renew(h.ctx, "k", 2, lease), ledger.ErrFenced)
	err = h.l.SetPayload(h.ctx, ledger.PayloadParams{Key: "k", Fence: 2, Payload: []byte("x"), Why: "late"})
	wantErr(h.t, "SetPayload after Finish", err, ledger.ErrFenced)
	h.unchanged("after writes to a done entry", "k", done, 3)

	// A done entry's payload is replaced only with Done and its own fence
	// (its artifact was edited to match); status and ref stay.
	err = h.l.SetPayload(h.ctx, ledger.PayloadParams{Key: "k", Fence: 1, Payload: []byte("x"), PayloadHash: "x", Why: "old fence", Done: true})
	wantErr(h.t, "SetPayload Done under an old fence", err, ledger.ErrFenced)
	h.unchanged("after a fenced Done SetPayload", "k", done, 3)
	h.clock.Advance(time.Second)
	if err := h.l.SetPayload(h.ctx, ledger.PayloadParams{Key: "k", Fence: 2, Payload: []byte(`{"v":2}`), PayloadHash: "v2", Why: "updated", Done: true}); err != nil {
		h.t.Fatalf("SetPayload Done: %v", err)
	}
	want := *done
	want.Payload, want.PayloadHash, want.UpdatedAt = []byte(`{"v":2}`), "v2", h.clock.Now()
	h.same("after SetPayload Done", h.get("k"), &want)
	if n := len(h.history("k")); n != 4 {
		h.t.Errorf("history has %d transitions after SetPayload Done, want 4", n)
	}
	// An attempting entry is not done: Done is fenced on it.
	h.claim(params("a", "a"), ledger.ClaimCreated)
	err = h.l.SetPayload(h.ctx, ledger.PayloadParams{Key: "a", Fence: 1, Payload: []byte("x"), Why: "x", Done: true})
	wantErr(h.t, "SetPayload Done on an attempting entry", err, ledger.ErrFenced)
}

func testTakeOverFence(h *harness) {
	a := h.claim(params("k", "a"), ledger.ClaimCreated)
	h.clock.Advance(time.Second) // a's lease is live

	wrong := params("k", "b")
	wrong.TakeOverFence = 2
	h.claim(wrong, ledger.ClaimBusy)
	h.unchanged("take-over naming the wrong fence", "k", a.Entry, 1)

	take := params("k", "b")
	take.TakeOverFence = 1
	take.Why = "holder run-a is gone"
	c := h.claim(take, ledger.ClaimAcquired)
	if c.Prior != ledger.Attempting || c.Entry.Fence != 2 || c.Entry.Attempts != 2 || h.kept(c.Entry).Owner != h.kept(&ledger.Entry{Owner: take.Owner}).Owner {
		h.t.Errorf("take-over: prior %q, fence %d, attempts %d, owner %+v; want attempting, 2, 2, %+v",
			c.Prior, c.Entry.Fence, c.Entry.Attempts, c.Entry.Owner, take.Owner)
	}
	if !c.Entry.LeaseUntil.Equal(h.clock.Now().Add(lease)) {
		h.t.Errorf("take-over lease until %v, want %v", c.Entry.LeaseUntil, h.clock.Now().Add(lease))
	}
	// The same take-over again names a fence that is gone: b holds the entry.
	again := params("k", "c")
	again.TakeOverFence = 1
	h.claim(again, ledger.ClaimBusy)
	_, err := h.l.Finish(h.ctx, ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Done, Why: "a"})
	wantErr(h.t, "Finish by the taken-over owner", err, ledger.ErrFenced)
	h.checkHistory("k", []ledger.Transition{
		{Key: "k", At: h.start, Owner: "run-a", To: ledger.Attempting, Fence: 1, Why: "claim by a"},
		{Key: "k", At: h.start.Add(time.Second), Owner: "run-b", From: ledger.Attempting, To: ledger.Attempting, Fence: 2, Why: take.Why},
	})
}

func testRelease(h *harness) {
	pa := params("k", "a")
	h.claim(pa, ledger.ClaimCreated)
	h.clock.Advance(time.Second)
	now := h.clock.Now()
	e := h.finish(ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Attempting, Error: "timed out waiting for GitHub", Why: "release"})
	want := created(pa, h.start)
	want.Owner, want.LeaseUntil = ledger.Owner{}, time.Time{}
	want.LastError = "timed out waiting for GitHub"
	want.UpdatedAt = now
	h.same("released entry", e, want)
	h.same("Get after release", h.get("k"), want)
	if e.LeaseLive(now) {
		h.t.Error("released entry's lease is live")
	}
	// The next run acquires at once, without waiting for the lease to run out.
	c := h.claim(params("k", "b"), ledger.ClaimAcquired)
	if c.Prior != ledger.Attempting || c.Entry.Fence != 2 || c.Entry.Attempts != 2 {
		h.t.Errorf("claim after release: prior %q, fence %d, attempts %d; want attempting, 2, 2", c.Prior, c.Entry.Fence, c.Entry.Attempts)
	}
	h.checkHistory("k", []ledger.Transition{
		{Key: "k", At: h.start, Owner: "run-a", To: ledger.Attempting, Fence: 1, Why: "claim by a"},
		{Key: "k", At: now, Owner: "run-a", From: ledger.Attempting, To: ledger.Attempting, Fence: 1, Why: "release"},
		{Key: "k", At: now, Owner: "run-b", From: ledger.Attempting, To: ledger.Attempting, Fence: 2, Why: "claim by b"},
	})
}

// testReleaseKeepsAge: a release with Since (an attempt that settled
// nothing: reconcile, a look-up without an answer) leaves the entry's
// UpdatedAt where the attempt before it left it, so the entry stays as
// old as it was for List's UpdatedBefore (status --stale); its history
// still records the claim and the release when they happened.
func testReleaseKeepsAge(h *harness) {
	h.claim(params("k", "a"), ledger.ClaimCreated)
	h.clock.Advance(time.Second)
	left := h.finish(ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Attempting, Error: "killed", Why: "release"}).UpdatedAt
	h.clock.Advance(time.Hour)
	c := h.claim(params("k", "reconcile"), ledger.ClaimAcquired)
	if !c.PriorUpdatedAt.Equal(left) {
		h.t.Fatalf("PriorUpdatedAt %s, want %s, when the first attempt left it", c.PriorUpdatedAt, left)
	}
	h.clock.Advance(time.Second)
	e := h.finish(ledger.FinishParams{Key: "k", Fence: 2, Status: ledger.Attempting, Error: "no answer", Why: "reconcile: unsettled", Since: c.PriorUpdatedAt})
	// A LockOnly backend keeps no error text.
	if !e.UpdatedAt.Equal(left) || !h.get("k").UpdatedAt.Equal(left) || !h.lockOnly && e.LastError != "no answer" || e.Owner.ID != "" {
		h.t.Fatalf("released with Since: updated %s (Get: %s), error %q, owner %q; want %s, the new error, no owner", e.UpdatedAt, h.get("k").UpdatedAt, e.LastError, e.Owner.ID, left)
	}
	stale, err := h.l.List(h.ctx, ledger.ListParams{Status: ledger.Attempting, UpdatedBefore: left.Add(time.Minute)})
	if err != nil || len(stale) != 1 {
		h.t.Fatalf("List updated before an hour ago: %d entries, %v; want the entry that kept its age", len(stale), err)
	}
	if hist := h.history("k"); len(hist) != 4 || hist[3].At.Before(left.Add(time.Hour)) {
		h.t.Errorf("history %+v: want the unsettled release recorded when it happened", hist)
	}
	// A Since not before now, or on a finish that is not a release, is now.
	h.clock.Advance(time.Second)
	h.claim(params("k", "c"), ledger.ClaimAcquired)
	now := h.clock.Now()
	if e := h.finish(ledger.FinishParams{Key: "k", Fence: 3, Status: ledger.Failed, Why: "refused", Since: left}); e.UpdatedAt.Before(now) {
		h.t.Errorf("a failed finish with Since: updated %s, want now (%s)", e.UpdatedAt, now)
	}
}

func testFailedIsAcquired(h *harness) {
	pa := params("k", "a")
	h.claim(pa, ledger.ClaimCreated)
	h.clock.Advance(time.Second)
	e := h.finish(ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Failed, Error: "422 Validation Failed", Why: "refused"})
	want := created(pa, h.start)
	want.Status = ledger.Failed
	want.Owner, want.LeaseUntil = ledger.Owner{}, time.Time{}
	want.LastError = "422 Validation Failed"
	want.UpdatedAt = h.clock.Now()
	h.same("failed entry", e, want)

	h.clock.Advance(time.Second)
	pb := params("k", "b")
	c := h.claim(pb, ledger.ClaimAcquired)
	if c.Prior != ledger.Failed {
		h.t.Errorf("Prior = %q, want failed", c.Prior)
	}
	if c.Entry.Status != ledger.Attempting || c.Entry.Fence != 2 || c.Entry.Attempts != 2 || h.kept(c.Entry).Owner != h.kept(&ledger.Entry{Owner: pb.Owner}).Owner {
		h.t.Errorf("claim of failed entry: %+v", c.Entry)
	}
	if !bytes.Equal(h.kept(c.Entry).Payload, h.kept(&ledger.Entry{Payload: pa.Payload}).Payload) {
		h.t.Errorf("payload after acquire = %q, want the first %q", c.Entry.Payload, pa.Payload)
	}
	h.checkHistory("k", []ledger.Transition{
		{Key: "k", At: h.start, Owner: "run-a", To: ledger.Attempting, Fence: 1, Why: "claim by a"},
		{Key: "k", At: h.start.Add(time.Second), Owner: "run-a", From: ledger.Attempting, To: ledger.Failed, Fence: 1, Why: "refused"},
		{Key: "k", At: h.start.Add(2 * time.Second), Owner: "run-b", From: ledger.Failed, To: ledger.Attempting, Fence: 2, Why: "claim by b"},
	})
}
