// Package ledgertest is the conformance suite of the ledger contract: every
// backend (SQLite, Postgres, ...) runs Run from its own tests and must pass
// it unchanged. It tests only what ledger.Ledger promises, through the
// interface, with a clock the suite controls.
//
// Besides the interface comments, the suite holds backends to these points,
// which the comments leave implicit:
//
//   - Times are read from the clock the backend was opened with. Every time
//     the suite sets is a whole millisecond, so a backend that stores
//     microseconds compares equal.
//   - A lease whose end equals now is dead.
//   - Claim, when it writes (created or acquired), Finish (including a
//     release), SetPayload and Resolve each append one transition; Claim
//     that finds the entry done or busy, Renew, and the reads append none.
//     A transition records the owner that made it ("person:<who>" for
//     Resolve), the fence the entry has after it, and the Why (Resolve: the
//     Note).
//   - Finish and Resolve clear Owner and LeaseUntil (a release keeps the
//     status attempting); Resolve sets Outcome "resolved".
//   - An acquiring Claim keeps LastError (it tells the new runner what went
//     wrong before); only Finish changes it.
//   - List with a zero Limit returns every match.
//
// What a holder's own second Claim of a key it holds returns is not pinned
// down: the contract names no state for it.
package ledgertest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

// Open returns a new, empty ledger that reads the time from now. Run calls
// it once per subtest and closes the ledger when the subtest ends; Open
// itself removes any backing store it made, with t.Cleanup.
type Open func(t *testing.T, now func() time.Time) ledger.Ledger

// start is the time the suite's clock shows when a subtest begins: a whole
// second, far from the zero time and from the Unix epoch.
func start() time.Time { return time.Date(2030, time.January, 2, 3, 4, 5, 0, time.UTC) }

// Run runs the conformance suite against the backend that open makes.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(h *harness)
	}{
		{"ClaimCreates", testClaimCreates},
		{"ClaimBusyWritesNothing", testClaimBusy},
		{"ClaimDoneWritesNothing", testClaimDone},
		{"LeaseExpiry", testLeaseExpiry},
		{"ClaimNowIsTheLedgersClock", testClaimNow},
		{"SendingMark", testSending},
		{"StaleOwnerFenced", testStaleOwnerFenced},
		{"TakeOverFence", testTakeOverFence},
		{"Release", testRelease},
		{"FailedIsAcquired", testFailedIsAcquired},
		{"FinishDone", testFinishDone},
		{"FinishVerifiable", testFinishVerifiable},
		{"LastError", testLastError},
		{"Payload", testPayload},
		{"Renew", testRenew},
		{"ResolveBusy", testResolveBusy},
		{"ResolveDone", testResolveDone},
		{"ResolveFailed", testResolveFailed},
		{"History", testHistory},
		{"List", testList},
		{"NotFound", testNotFound},
		{"ConcurrentCreate", testConcurrentCreate},
		{"ConcurrentAcquire", testConcurrentAcquire},
		{"Meta", testMeta},
		{"ConcurrentMetaIfAbsent", testConcurrentMetaIfAbsent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewClock(start())
			l := open(t, clock.Now)
			t.Cleanup(func() {
				if err := l.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tt.fn(&harness{t: t, l: l, clock: clock, start: clock.Now(), ctx: context.Background()})
		})
	}
}

const lease = time.Minute

type harness struct {
	t     *testing.T
	l     ledger.Ledger
	clock *Clock
	start time.Time // the clock's time when the subtest began
	ctx   context.Context
}

func owner(name string) ledger.Owner {
	return ledger.Owner{ID: "run-" + name, Host: "host-" + name, PID: 1000 + len(name),
		Boot: "boot-" + name, PIDNS: 4026531836 + uint64(len(name)), Start: 1 << 40}
}

// params is a claim of key by the owner called who.
func params(key, who string) ledger.ClaimParams {
	payload := fmt.Sprintf(`{"key":%q,"by":%q}`, key, who)
	return ledger.ClaimParams{
		Key:         key,
		Task:        "task-1",
		Step:        "open-pr",
		Kind:        "pr",
		Repo:        "octo/repo",
		Target:      "main",
		Payload:     []byte(payload),
		PayloadHash: "hash-of-" + payload,
		Owner:       owner(who),
		Lease:       lease,
		Why:         "claim by " + who,
	}
}

func (h *harness) claim(p ledger.ClaimParams, want ledger.ClaimState) *ledger.Claim {
	h.t.Helper()
	c, err := h.l.Claim(h.ctx, p)
	if err != nil {
		h.t.Fatalf("Claim(%s by %s): %v", p.Key, p.Owner.ID, err)
	}
	if c == nil || c.Entry == nil {
		h.t.Fatalf("Claim(%s by %s) = %+v, want a claim with an entry", p.Key, p.Owner.ID, c)
	}
	if c.State != want {
		h.t.Fatalf("Claim(%s by %s) state = %v, want %v", p.Key, p.Owner.ID, c.State, want)
	}
	return c
}

func (h *harness) get(key string) *ledger.Entry {
	h.t.Helper()
	e, err := h.l.Get(h.ctx, key)
	if err != nil {
		h.t.Fatalf("Get(%s): %v", key, err)
	}
	if e == nil {
		h.t.Fatalf("Get(%s) = nil entry, nil error", key)
	}
	return e
}

func (h *harness) finish(p ledger.FinishParams) *ledger.Entry {
	h.t.Helper()
	e, err := h.l.Finish(h.ctx, p)
	if err != nil {
		h.t.Fatalf("Finish(%s fence %d to %s): %v", p.Key, p.Fence, p.Status, err)
	}
	if e == nil {
		h.t.Fatalf("Finish(%s) = nil entry, nil error", p.Key)
	}
	return e
}

func (h *harness) history(key string) []ledger.Transition {
	h.t.Helper()
	ts, err := h.l.History(h.ctx, key)
	if err != nil {
		h.t.Fatalf("History(%s): %v", key, err)
	}
	return ts
}

// same fails the test if got differs from want in any field.
func (h *harness) same(what string, got, want *ledger.Entry) {
	h.t.Helper()
	for _, d := range diff(got, want) {
		h.t.Errorf("%s: %s", what, d)
	}
}

// unchanged checks that key's entry and history are as before.
func (h *harness) unchanged(what, key string, before *ledger.Entry, history int) {
	h.t.Helper()
	h.same(what+": entry", h.get(key), before)
	if n := len(h.history(key)); n != history {
		h.t.Errorf("%s: history has %d transitions, want %d", what, n, history)
	}
}

func diff(got, want *ledger.Entry) []string {
	if got == nil || want == nil {
		if got != want {
			return []string{fmt.Sprintf("entry = %v, want %v", got, want)}
		}
		return nil
	}
	var d []string
	str := func(name, g, w string) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %q, want %q", name, g, w))
		}
	}
	num := func(name string, g, w int64) {
		if g != w {
			d = append(d, fmt.Sprintf("%s = %d, want %d", name, g, w))
		}
	}
	tm := func(name string, g, w time.Time) {
		if !g.Equal(w) {
			d = append(d, fmt.Sprintf("%s = %v, want %v", name, g, w))
		}
	}
	str("Key", got.Key, want.Key)
	str("Task", got.Task, want.Task)
	str("Step", got.Step, want.Step)
	str("Kind", got.Kind, want.Kind)
	str("Repo", got.Repo, want.Repo)
	str("Target", got.Target, want.Target)
	if !bytes.Equal(got.Payload, want.Payload) {
		d = append(d, fmt.Sprintf("Payload = %q, want %q", got.Payload, want.Payload))
	}
	str("PayloadHash", got.PayloadHash, want.PayloadHash)
	str("Status", string(got.Status), string(want.Status))
	str("Outcome", got.Outcome, want.Outcome)
	if got.Ref != want.Ref {
		d = append(d, fmt.Sprintf("Ref = %+v, want %+v", got.Ref, want.Ref))
	}
	if got.Owner != want.Owner {
		d = append(d, fmt.Sprintf("Owner = %+v, want %+v", got.Owner, want.Owner))
	}
	tm("LeaseUntil", got.LeaseUntil, want.LeaseUntil)
	num("Fence", got.Fence, want.Fence)
	num("Attempts", int64(got.Attempts), int64(want.Attempts))
	str("LastError", got.LastError, want.LastError)
	tm("CreatedAt", got.CreatedAt, want.CreatedAt)
	tm("UpdatedAt", got.UpdatedAt, want.UpdatedAt)
	tm("Sending.At", got.Sending.At, want.Sending.At)
	if got.Sending.Proc != want.Sending.Proc {
		d = append(d, fmt.Sprintf("Sending.Proc = %+v, want %+v", got.Sending.Proc, want.Sending.Proc))
	}
	return d
}

// checkHistory compares key's history with want, field by field.
func (h *harness) checkHistory(key string, want []ledger.Transition) {
	h.t.Helper()
	got := h.history(key)
	if len(got) != len(want) {
		h.t.Errorf("History(%s) has %d transitions, want %d:", key, len(got), len(want))
		for i, tr := range got {
			h.t.Logf("  got[%d] = %+v", i, tr)
		}
		return
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Key != w.Key || !g.At.Equal(w.At) || g.Owner != w.Owner || g.From != w.From || g.To != w.To || g.Fence != w.Fence || g.Why != w.Why {
			h.t.Errorf("History(%s)[%d] = %+v\n\twant %+v", key, i, g, w)
		}
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: err = %v, want %v", what, err, want)
	}
}

// created is the entry a claim by p makes at now.
func created(p ledger.ClaimParams, now time.Time) *ledger.Entry {
	return &ledger.Entry{
		Key: p.Key, Task: p.Task, Step: p.Step, Kind: p.Kind, Repo: p.Repo, Target: p.Target,
		Payload: p.Payload, PayloadHash: p.PayloadHash,
		Status: ledger.Attempting, Owner: p.Owner, LeaseUntil: now.Add(p.Lease),
		Fence: 1, Attempts: 1, CreatedAt: now, UpdatedAt: now,
	}
}

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
	if e := h.finish(ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Attempting, Why: "release"}); e.Sending != want.Sending {
		h.t.Errorf("release: Sending = %+v, want %+v", e.Sending, want.Sending)
	}
	c := h.claim(params("k", "b"), ledger.ClaimAcquired)
	if c.Entry.Sending != want.Sending || h.get("k").Sending != want.Sending {
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
	if c.Prior != ledger.Attempting || c.Entry.Fence != 2 || c.Entry.Attempts != 2 || c.Entry.Owner != take.Owner {
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
	if c.Entry.Status != ledger.Attempting || c.Entry.Fence != 2 || c.Entry.Attempts != 2 || c.Entry.Owner != pb.Owner {
		h.t.Errorf("claim of failed entry: %+v", c.Entry)
	}
	if !bytes.Equal(c.Entry.Payload, pa.Payload) {
		h.t.Errorf("payload after acquire = %q, want the first %q", c.Entry.Payload, pa.Payload)
	}
	h.checkHistory("k", []ledger.Transition{
		{Key: "k", At: h.start, Owner: "run-a", To: ledger.Attempting, Fence: 1, Why: "claim by a"},
		{Key: "k", At: h.start.Add(time.Second), Owner: "run-a", From: ledger.Attempting, To: ledger.Failed, Fence: 1, Why: "refused"},
		{Key: "k", At: h.start.Add(2 * time.Second), Owner: "run-b", From: ledger.Failed, To: ledger.Attempting, Fence: 2, Why: "claim by b"},
	})
}

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
	if !bytes.Equal(c.Entry.Payload, pa.Payload) || c.Entry.PayloadHash != pa.PayloadHash {
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
	if !bytes.Equal(c.Entry.Payload, pb.Payload) || c.Entry.PayloadHash != pb.PayloadHash {
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
	if e.Fence != 1 || e.Status != ledger.Attempting || e.Owner != owner("a") {
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

func testResolveBusy(h *harness) {
	a := h.claim(params("k", "a"), ledger.ClaimCreated)
	h.clock.Advance(time.Second)
	for _, st := range []ledger.Status{ledger.Done, ledger.Failed} {
		_, err := h.l.Resolve(h.ctx, ledger.ResolveParams{Key: "k", Status: st, Ref: ledger.Ref{Number: 3}, Who: "alice", Note: "too early"})
		wantErr(h.t, "Resolve "+string(st)+" under a live lease", err, ledger.ErrBusy)
	}
	h.unchanged("refused Resolve", "k", a.Entry, 1)
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
	if want := (ledger.Ref{Number: 7, URL: ref.URL, Text: "checked by hand"}); e.Ref != want || h.get("k").Ref != want {
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

func testHistory(h *harness) {
	tick := func() time.Time { h.clock.Advance(time.Second); return h.clock.Now() }
	h.claim(params("k", "a"), ledger.ClaimCreated)
	h.claim(params("other", "a"), ledger.ClaimCreated)
	t1 := tick()
	h.finish(ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Attempting, Why: "release"})
	t2 := tick()
	h.claim(params("k", "b"), ledger.ClaimAcquired)
	t3 := tick()
	h.finish(ledger.FinishParams{Key: "k", Fence: 2, Status: ledger.Failed, Error: "refused", Why: "refused"})
	t4 := tick()
	h.claim(params("k", "c"), ledger.ClaimAcquired)
	h.claim(params("k", "d"), ledger.ClaimBusy) // writes nothing
	t5 := tick()
	h.finish(ledger.FinishParams{Key: "k", Fence: 3, Status: ledger.Done, Outcome: "created", Why: "created"})
	t6 := tick()
	h.claim(params("k", "d"), ledger.ClaimDone) // writes nothing
	if _, err := h.l.Resolve(h.ctx, ledger.ResolveParams{Key: "k", Status: ledger.Done, Ref: ledger.Ref{Number: 2}, Who: "eve", Note: "it is PR 2"}); err != nil {
		h.t.Fatalf("Resolve: %v", err)
	}
	h.checkHistory("k", []ledger.Transition{
		{Key: "k", At: h.start, Owner: "run-a", From: "", To: ledger.Attempting, Fence: 1, Why: "claim by a"},
		{Key: "k", At: t1, Owner: "run-a", From: ledger.Attempting, To: ledger.Attempting, Fence: 1, Why: "release"},
		{Key: "k", At: t2, Owner: "run-b", From: ledger.Attempting, To: ledger.Attempting, Fence: 2, Why: "claim by b"},
		{Key: "k", At: t3, Owner: "run-b", From: ledger.Attempting, To: ledger.Failed, Fence: 2, Why: "refused"},
		{Key: "k", At: t4, Owner: "run-c", From: ledger.Failed, To: ledger.Attempting, Fence: 3, Why: "claim by c"},
		{Key: "k", At: t5, Owner: "run-c", From: ledger.Attempting, To: ledger.Done, Fence: 3, Why: "created"},
		{Key: "k", At: t6, Owner: "person:eve", From: ledger.Done, To: ledger.Done, Fence: 3, Why: "it is PR 2"},
	})
	h.checkHistory("other", []ledger.Transition{
		{Key: "other", At: h.start, Owner: "run-a", To: ledger.Attempting, Fence: 1, Why: "claim by a"},
	})
	if got := h.history("unknown"); len(got) != 0 {
		h.t.Errorf("History(unknown) = %+v, want empty", got)
	}
}

func testList(h *harness) {
	claimAs := func(key, task, repo, kind string) {
		p := params(key, "a")
		p.Task, p.Repo, p.Kind = task, repo, kind
		h.claim(p, ledger.ClaimCreated)
	}
	if es, err := h.l.List(h.ctx, ledger.ListParams{}); err != nil || len(es) != 0 {
		h.t.Fatalf("List of an empty ledger = %d entries, %v", len(es), err)
	}
	// Created in the order z, b, a (b and a in the same instant): listed
	// oldest first, then by key.
	claimAs("z", "t1", "o/a", "pr")
	h.clock.Advance(time.Second)
	claimAs("b", "t1", "o/b", "comment")
	claimAs("a", "t2", "o/a", "pr")
	h.clock.Advance(time.Second)
	claimAs("c", "t2", "o/b", "issue")
	h.clock.Advance(time.Second)
	h.finish(ledger.FinishParams{Key: "z", Fence: 1, Status: ledger.Done, Outcome: "created", Why: "ok"})
	h.finish(ledger.FinishParams{Key: "b", Fence: 1, Status: ledger.Failed, Why: "no"})
	// Updated: z and b at h.start+3s, a at h.start+1s, c at h.start+2s.

	for _, tt := range []struct {
		name string
		p    ledger.ListParams
		want []string
	}{
		{"all", ledger.ListParams{}, []string{"z", "a", "b", "c"}},
		{"task", ledger.ListParams{Task: "t1"}, []string{"z", "b"}},
		{"repo", ledger.ListParams{Repo: "o/a"}, []string{"z", "a"}},
		{"kind", ledger.ListParams{Kind: "pr"}, []string{"z", "a"}},
		{"status done", ledger.ListParams{Status: ledger.Done}, []string{"z"}},
		{"status failed", ledger.ListParams{Status: ledger.Failed}, []string{"b"}},
		{"status attempting", ledger.ListParams{Status: ledger.Attempting}, []string{"a", "c"}},
		{"updated before", ledger.ListParams{UpdatedBefore: h.start.Add(2 * time.Second)}, []string{"a"}},
		{"updated before, inclusive of nothing at the bound", ledger.ListParams{UpdatedBefore: h.start.Add(3 * time.Second)}, []string{"a", "c"}},
		{"limit", ledger.ListParams{Limit: 2}, []string{"z", "a"}},
		{"limit above count", ledger.ListParams{Limit: 10}, []string{"z", "a", "b", "c"}},
		{"combined", ledger.ListParams{Task: "t2", Repo: "o/b"}, []string{"c"}},
		{"combined with limit", ledger.ListParams{Repo: "o/b", Status: ledger.Failed, Limit: 1}, []string{"b"}},
		{"no match", ledger.ListParams{Task: "t1", Kind: "issue"}, nil},
	} {
		es, err := h.l.List(h.ctx, tt.p)
		if err != nil {
			h.t.Errorf("List(%s): %v", tt.name, err)
			continue
		}
		var got []string
		for _, e := range es {
			got = append(got, e.Key)
		}
		if fmt.Sprint(got) != fmt.Sprint(tt.want) {
			h.t.Errorf("List(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
	// Listed entries are whole.
	es, err := h.l.List(h.ctx, ledger.ListParams{Task: "t1", Status: ledger.Done})
	if err != nil || len(es) != 1 {
		h.t.Fatalf("List = %d entries, %v", len(es), err)
	}
	h.same("listed entry", es[0], h.get("z"))
}

func testNotFound(h *harness) {
	_, err := h.l.Get(h.ctx, "nope")
	wantErr(h.t, "Get", err, ledger.ErrNotFound)
	_, err = h.l.Finish(h.ctx, ledger.FinishParams{Key: "nope", Fence: 1, Status: ledger.Done, Why: "x"})
	wantErr(h.t, "Finish", err, ledger.ErrNotFound)
	err = h.l.SetPayload(h.ctx, ledger.PayloadParams{Key: "nope", Fence: 1, Payload: []byte("x"), Why: "x"})
	wantErr(h.t, "SetPayload", err, ledger.ErrNotFound)
	wantErr(h.t, "Renew", h.l.Renew(h.ctx, "nope", 1, lease), ledger.ErrNotFound)
	_, err = h.l.Resolve(h.ctx, ledger.ResolveParams{Key: "nope", Status: ledger.Done, Who: "alice", Note: "x"})
	wantErr(h.t, "Resolve", err, ledger.ErrNotFound)
	// None of them created the entry.
	_, err = h.l.Get(h.ctx, "nope")
	wantErr(h.t, "Get afterwards", err, ledger.ErrNotFound)
}

const racers = 16

// race has racers goroutines claim key at once, as owners r0, r1, ..., and
// returns how many got each state.
func (h *harness) race(key string) (map[ledger.ClaimState]int, *ledger.Claim) {
	h.t.Helper()
	var (
		start  = make(chan struct{})
		wg     sync.WaitGroup
		mu     sync.Mutex
		states = map[ledger.ClaimState]int{}
		winner *ledger.Claim
	)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c, err := h.l.Claim(h.ctx, params(key, fmt.Sprintf("r%d", i)))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				h.t.Errorf("racer %d: Claim: %v", i, err)
				return
			}
			states[c.State]++
			if c.State == ledger.ClaimCreated || c.State == ledger.ClaimAcquired {
				winner = c
			}
		}()
	}
	close(start)
	wg.Wait()
	return states, winner
}

func testConcurrentCreate(h *harness) {
	states, winner := h.race("k")
	if states[ledger.ClaimCreated] != 1 || states[ledger.ClaimBusy] != racers-1 {
		h.t.Fatalf("%d concurrent claims of a new key: %v created, %v busy, %v acquired; want 1, %d, 0",
			racers, states[ledger.ClaimCreated], states[ledger.ClaimBusy], states[ledger.ClaimAcquired], racers-1)
	}
	h.same("winner's entry", h.get("k"), winner.Entry)
	if n := len(h.history("k")); n != 1 {
		h.t.Errorf("history has %d transitions, want 1", n)
	}
}

func testConcurrentAcquire(h *harness) {
	h.claim(params("k", "a"), ledger.ClaimCreated)
	h.clock.Advance(lease)
	states, winner := h.race("k")
	if states[ledger.ClaimAcquired] != 1 || states[ledger.ClaimBusy] != racers-1 {
		h.t.Fatalf("%d concurrent claims of a dead lease: %v acquired, %v busy, %v created; want 1, %d, 0",
			racers, states[ledger.ClaimAcquired], states[ledger.ClaimBusy], states[ledger.ClaimCreated], racers-1)
	}
	e := h.get("k")
	h.same("winner's entry", e, winner.Entry)
	if e.Fence != 2 || e.Attempts != 2 {
		h.t.Errorf("fence %d, attempts %d; want 2, 2", e.Fence, e.Attempts)
	}
	if n := len(h.history("k")); n != 2 {
		h.t.Errorf("history has %d transitions, want 2", n)
	}
}

func testMeta(h *harness) {
	if _, err := h.l.GetMeta(h.ctx, "ledgertest-meta"); !errors.Is(err, ledger.ErrNotFound) {
		h.t.Fatalf("GetMeta of an unset name: err = %v, want ErrNotFound", err)
	}
	if wrote, err := h.l.PutMeta(h.ctx, "ledgertest-meta", "init", true); err != nil || !wrote {
		h.t.Fatalf("PutMeta ifAbsent on an unset name = %v, %v; want true, nil", wrote, err)
	}
	if wrote, err := h.l.PutMeta(h.ctx, "ledgertest-meta", "action", true); err != nil || wrote {
		h.t.Fatalf("PutMeta ifAbsent on a set name = %v, %v; want false, nil", wrote, err)
	}
	if v, err := h.l.GetMeta(h.ctx, "ledgertest-meta"); err != nil || v != "init" {
		h.t.Fatalf("GetMeta after a refused ifAbsent = %q, %v; want the first value", v, err)
	}
	if wrote, err := h.l.PutMeta(h.ctx, "ledgertest-meta", "action", false); err != nil || !wrote {
		h.t.Fatalf("PutMeta = %v, %v; want true, nil", wrote, err)
	}
	if v, err := h.l.GetMeta(h.ctx, "ledgertest-meta"); err != nil || v != "action" {
		h.t.Fatalf("GetMeta after a replace = %q, %v; want action", v, err)
	}
	if _, err := h.l.PutMeta(h.ctx, "", "x", false); err == nil {
		h.t.Error("PutMeta with an empty name succeeded")
	}
	// Meta values live beside entries, not among them.
	if es, err := h.l.List(h.ctx, ledger.ListParams{}); err != nil || len(es) != 0 {
		h.t.Errorf("List after PutMeta = %d entries, %v; want none", len(es), err)
	}
}

func testConcurrentMetaIfAbsent(h *harness) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		wins  []string
		start = make(chan struct{})
	)
	for i := 0; i < racers; i++ {
		wg.Add(1)
		go func(v string) {
			defer wg.Done()
			<-start
			wrote, err := h.l.PutMeta(h.ctx, "ledgertest-meta", v, true)
			if err != nil {
				h.t.Errorf("PutMeta: %v", err)
				return
			}
			if wrote {
				mu.Lock()
				wins = append(wins, v)
				mu.Unlock()
			}
		}(fmt.Sprint("writer-", i))
	}
	close(start)
	wg.Wait()
	if len(wins) != 1 {
		h.t.Fatalf("%d concurrent ifAbsent writers won: %v; want exactly one", racers, wins)
	}
	if v, err := h.l.GetMeta(h.ctx, "ledgertest-meta"); err != nil || v != wins[0] {
		h.t.Errorf("GetMeta = %q, %v; want the winner's %q", v, err, wins[0])
	}
}
