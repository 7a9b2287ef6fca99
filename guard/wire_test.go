package guard_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/ledger/sqlite"
)

// A first pull request through the transport, on an established ledger
// (the token's login cached by an earlier create): two content-creating
// requests, and the round trips one after another before go-github gets
// its answer: three (the look-up, the create, the labels), or two with
// Options.AnswerBeforeTags, whose labels follow the answer and are on the
// pull request once Wait returns. reconcile's TestWireFirstCreate counts
// the engine's fronts, internal/cli's TestWireFirstPRCreateCLIAndShim the
// CLI's and the shim's.
func TestTransportWireFirstPR(t *testing.T) {
	for _, early := range []bool{false, true} {
		w := newWorld(t)
		path := ledgerIn(t)
		ctx := context.Background()
		l, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := guard.New(nil, guard.Options{Ledger: l, Getenv: func(string) string { return "" }, AnswerBeforeTags: early})
		if err != nil {
			t.Fatal(err)
		}
		gh := w.gh(tr)
		// An earlier create caches the login: the ledger is established.
		if _, _, err := gh.Issues.Create(guard.WithStep(ctx, "WIRE-SETUP", ""), owner, name, &github.IssueRequest{Title: github.String("Flaky test"), Body: github.String("b")}); err != nil {
			t.Fatal(err)
		}
		w.GitHub.WaitIdle()
		before := len(w.GitHub.Requests())
		w.GitHub.SetLatency(50 * time.Millisecond)
		pr, _, err := gh.PullRequests.Create(guard.WithStep(ctx, "WIRE", ""), owner, name, &github.NewPullRequest{
			Title: github.String("Fix #42"), Head: github.String("fix-42"), Base: github.String("main"), Body: github.String("b"),
		})
		answered := time.Now()
		tr.Wait()
		w.GitHub.SetLatency(0)
		if err != nil {
			t.Fatal(err)
		}
		w.GitHub.WaitIdle()
		reqs := w.GitHub.Requests()[before:]
		var first []fixtures.Request
		var paths []string
		writes := 0
		for _, q := range reqs {
			paths = append(paths, q.Method+" "+q.Path)
			if q.Method != http.MethodGet {
				writes++
			}
			if q.End.Before(answered) {
				first = append(first, q)
			}
		}
		trips, want := fixtures.RoundTrips(first), 3
		if early {
			want = 2
		}
		t.Logf("AnswerBeforeTags %t: %d requests, %d content-creating, %d round trips before the answer: %v", early, len(reqs), writes, trips, paths)
		if writes > 2 || trips > want {
			t.Errorf("AnswerBeforeTags %t: %d content-creating requests, %d round trips before the answer; want at most 2 and %d: %v", early, writes, trips, want, paths)
		}
		var labels []string
		for _, p := range w.GitHub.PullRequests(owner, name) {
			if p.Number == pr.GetNumber() {
				labels = p.Labels
			}
		}
		if !slices.ContainsFunc(labels, func(s string) bool { return strings.HasPrefix(s, "ghonce:") }) {
			t.Errorf("AnswerBeforeTags %t: after Wait, the pull request's labels are %q, want the key's", early, labels)
		}
		l.Close()
	}
}
