package ledgertest

// The harness every test of the suite runs with, and its checks.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

const lease = time.Minute

type harness struct {
	t     *testing.T
	l     ledger.Ledger
	clock *Clock
	start time.Time // the clock's time when the subtest began
	ctx   context.Context
	// lockOnly: the backend keeps only a lock and a record (LockOnly).
	lockOnly bool
}

// kept is e as a LockOnly backend keeps it; e itself for any other.
func (h *harness) kept(e *ledger.Entry) *ledger.Entry {
	if !h.lockOnly || e == nil {
		return e
	}
	k := *e
	k.Payload, k.LastError, k.Ref.Text, k.Sending.Proc = nil, "", "", ledger.Proc{}
	k.Owner = ledger.Owner{}
	if e.Owner.ID != "" {
		k.Owner.ID = "held"
	}
	return &k
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
	for _, d := range diff(h.kept(got), h.kept(want)) {
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
		if h.lockOnly {
			g.Owner, g.Why, w.Owner, w.Why = "", "", "", ""
		}
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
