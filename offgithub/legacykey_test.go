package offgithub_test

import (
	"context"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// An entry recorded before ids were normalised to NFC, under the key its
// decomposed id derived then, keeps that key: a rerun with either
// spelling finds it done instead of running the command a second time.
// A task no ledger has seen gets the NFC key, whichever spelling.
func TestEntryRecordedBeforeNFCKeepsItsKey(t *testing.T) {
	const nfd, nfc = "re\u0301sume\u0301-42", "r\u00e9sum\u00e9-42"
	x := newExecWorld(t)
	e, l := x.engine()
	ctx := context.Background()
	spec := x.notify(offgithub.OnUnconfirmedRetry) // the ledger is new: no --check, so retry
	raw := taskkey.Identity{Task: nfd, Step: "notify", Kind: "exec"}
	legacy := taskkey.LegacyKeys(raw)
	if len(legacy) == 0 || legacy[0] == taskkey.Key(raw) {
		t.Fatalf("LegacyKeys(NFD id) = %v: want the key the NFD bytes derived, which NFC changes", legacy)
	}
	// What an older ghonce recorded: done under the NFD key.
	c, err := l.Claim(ctx, ledger.ClaimParams{Key: legacy[0], Task: nfd, Step: "notify", Kind: "exec", Payload: []byte("{}"),
		Owner: reconcile.NewOwner(), Lease: time.Minute, Why: "run"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Finish(ctx, ledger.FinishParams{Key: legacy[0], Fence: c.Entry.Fence, Status: ledger.Done, Outcome: "created", Why: "test"}); err != nil {
		t.Fatal(err)
	}
	for _, task := range []string{nfd, nfc} {
		a := offgithub.Action{Task: task, Step: "notify", Spec: spec}
		r, err := do(ctx, e, a)
		if err != nil {
			t.Fatalf("%+q: %v", task, err)
		}
		if r.Outcome != outcome.Skipped || r.Key != legacy[0] {
			t.Errorf("%+q: outcome %s under %s; want skipped under the recorded key %s", task, r.Outcome, r.Key, legacy[0])
		}
	}
	if n := x.sends(); n != 0 {
		t.Errorf("the command ran %d times for work the ledger holds as done", n)
	}
	// New work: one key for both spellings, the NFC one.
	fresh := func(task string) offgithub.Action { return offgithub.Action{Task: task, Step: "other", Spec: spec} }
	r1, err1 := do(ctx, e, fresh(nfd))
	r2, err2 := do(ctx, e, fresh(nfc))
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if r1.Key != keyOf(t, fresh(nfc)) || r2.Key != r1.Key || r1.Outcome != outcome.Created || r2.Outcome != outcome.Skipped {
		t.Errorf("new work: %s %s then %s %s; want created then skipped under the NFC key %s", r1.Outcome, r1.Key, r2.Outcome, r2.Key, keyOf(t, fresh(nfc)))
	}
	if n := x.sends(); n != 1 {
		t.Errorf("the command ran %d times, want 1", n)
	}
}
