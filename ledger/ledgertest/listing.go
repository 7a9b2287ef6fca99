package ledgertest

// Reads: history, listings, missing entries.

import (
	"fmt"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

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
