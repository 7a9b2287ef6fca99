package mcp_test

import (
	"fmt"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
)

// github-mcp-server's pending flow through ghonce: create without an
// event makes a pending review; submit_pending, killed after GitHub stored
// it and retried by a restarted agent, submits it. One review, submitted;
// create with an event on another step is one more, once.
func TestPullRequestReviewWritePendingFlow(t *testing.T) {
	w := newWorld(t, opts{})
	w.fake.SetRef(owner, name, "feat", w.fake.AddCommit(owner, name, "main"))
	n := w.fake.SeedPR(owner, name, "someone", fixtures.SeedPR{Title: "Feature", Head: "feat"})
	w.ok("pull_request_review_write", args("method", "create", "pullNumber", n, "body", "Looking."))
	if rvs := w.fake.Reviews(owner, name, n); len(rvs) != 1 || rvs[0].State != "PENDING" {
		t.Fatalf("after create: %+v, want one pending review", rvs)
	}
	submit := args("method", "submit_pending", "pullNumber", n, "event", "APPROVE", "body", "Ship it.")
	w.fake.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath("POST", fmt.Sprintf("/repos/%s/%s/pulls/%d/reviews/%d/events", owner, name, n, w.fake.Reviews(owner, name, n)[0].ID)),
		Kind: fixtures.DropAfterCommit})
	w.fails("pull_request_review_write", submit)
	w.reconnect() // the agent, restarted
	w.ok("pull_request_review_write", submit)
	w.ok("pull_request_review_write", submit)
	if rvs := w.fake.Reviews(owner, name, n); len(rvs) != 1 || rvs[0].State != "APPROVED" {
		t.Fatalf("after submit_pending: %+v, want the one review, approved", rvs)
	}
	for range 2 {
		w.ok("pull_request_review_write", args("method", "create", "pullNumber", n, "event", "COMMENT", "body", "One more note.", "step", "note"))
	}
	if rvs := w.fake.Reviews(owner, name, n); len(rvs) != 2 {
		t.Fatalf("%d reviews, want 2", len(rvs))
	}
}
