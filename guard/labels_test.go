package guard_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/ledger/sqlite"
)

// go-github's AddLabelsToIssue (a bare JSON array) through the transport:
// an add whose answer was lost, and a label a person removed meanwhile,
// is found on the rerun, not applied again; go-github decodes the labels
// either way, and a third run is answered by the ledger.
func TestLabelsThroughTheTransport(t *testing.T) {
	w := newWorld(t)
	path := ledgerIn(t)
	w.GitHub.Inject(fixtures.Fault{Kind: fixtures.DropAfterCommit, Match: fixtures.MatchMethodPath("POST", fmt.Sprintf("/repos/%s/%s/issues/%d/labels", owner, name, w.issue))})
	l, err := sqlite.Open(context.Background(), path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	// Settle: the fake commits before it answers (see agentMain).
	tr, err := guard.New(nil, guard.Options{Ledger: l, LedgerNew: l.Created(), Settle: 200 * time.Millisecond, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	gh := w.gh(tr)
	add := func() (string, []string, error) {
		ctx := guard.WithStep(context.Background(), "ISSUE-42", "")
		ls, resp, err := gh.Issues.AddLabelsToIssue(ctx, owner, name, w.issue, []string{"ready"})
		var names []string
		for _, l := range ls {
			names = append(names, l.GetName())
		}
		if resp == nil {
			return "", names, err
		}
		return resp.Header.Get("X-Ghonce-Outcome"), names, err
	}
	if _, _, err := add(); err == nil {
		t.Fatal("first attempt: want the lost answer as an error")
	}
	w.GitHub.RemoveLabel(owner, name, w.issue, stranger, "ready")
	w.GitHub.SeedLabel(owner, name, w.issue, stranger, "triage")
	outcome, names, err := add()
	if err != nil || outcome != "found" || len(names) != 1 || names[0] != "triage" {
		t.Fatalf("rerun: %s %q, %v; want found, with the labels the issue has (triage)", outcome, names, err)
	}
	posts := 0
	for _, r := range w.GitHub.Requests() {
		if r.Method == http.MethodPost {
			posts++
		}
	}
	if outcome, _, err = add(); err != nil || outcome != "skipped" {
		t.Fatalf("third run: %s, %v; want skipped", outcome, err)
	}
	if n := w.GitHub.Labeled(owner, name, w.issue, "ready"); n != 1 || posts != 1 {
		t.Fatalf("%d labeled events after %d POSTs, want 1 and 1", n, posts)
	}
}
