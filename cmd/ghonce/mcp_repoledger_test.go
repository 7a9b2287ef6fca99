package main_test

import (
	"strings"
	"testing"
)

// claimRefsIn counts the repository ledger's claims in owner/repo.
func (w *world) claimRefsIn(repo string) int {
	n := 0
	for _, r := range w.fake.Refs(owner, repo) {
		if strings.HasPrefix(r, "refs/ghonce/claims/") {
			n++
		}
	}
	return n
}

// startMCPLedger is startMCP with the ledger loc and extra environment
// (neither GH_REPO nor GITHUB_REPOSITORY unless given there).
func (w *world) startMCPLedger(loc string, extra ...string) *mcpServer {
	w.t.Helper()
	return w.connectMCP(loc, w.envWithout([]string{"GH_REPO", "GITHUB_REPOSITORY", "GHONCE_LEDGER"}, extra...))
}

// TestMCPRepositoryLedgerClaimsWhereEachActionWrites: `ghonce mcp --ledger
// github` keeps each action's claim in the repository that action writes
// to, so a replica serving another repository's agent, or a CLI run on
// that repository, shares it; github://OWNER/REPO keeps every claim in that
// one repository and none in the repositories written to.
func TestMCPRepositoryLedgerClaimsWhereEachActionWrites(t *testing.T) {
	t.Parallel()
	const other, ops = "other-repo", "ops-ledger"
	for _, tc := range []struct {
		name                  string
		loc                   string
		env                   []string
		inName, inOther, inOp int
	}{
		{"github", "github", nil, 1, 1, 0},
		// GH_REPO is only the default of an action that names no
		// repository (a guarded command); these name theirs.
		{"github with GH_REPO", "github", []string{"GH_REPO=" + owner + "/" + ops}, 1, 1, 0},
		{"github://OWNER/REPO", "github://" + owner + "/" + ops, nil, 0, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.fake.AddRepo(owner, other, "main")
			w.fake.AddRepo(owner, ops, "main")
			create := func(m *mcpServer, repo, title string) result {
				args := mcpArgs("title", title, "body", "Seen in "+repo+".")
				args["repo"] = repo
				r, _ := m.ok("create_issue", args)
				return r
			}
			m := w.startMCPLedger(tc.loc, tc.env...)
			for _, repo := range []string{name, other} {
				if r := create(m, repo, "Flaky test"); r.Outcome != "created" {
					t.Fatalf("%s: outcome %s, want created", repo, r.Outcome)
				}
			}
			if got := [3]int{w.claimRefsIn(name), w.claimRefsIn(other), w.claimRefsIn(ops)}; got != [3]int{tc.inName, tc.inOther, tc.inOp} {
				t.Errorf("claims in %s, %s, %s: %v, want %v", name, other, ops, got, [3]int{tc.inName, tc.inOther, tc.inOp})
			}
			// Another replica, sharing nothing but the repositories: the
			// same calls, retried, are answered from the claims.
			m2 := w.startMCPLedger(tc.loc, tc.env...)
			for _, repo := range []string{name, other} {
				if r := create(m2, repo, "Flaky test"); r.Outcome != "skipped" {
					t.Errorf("%s on another replica: outcome %s, want skipped", repo, r.Outcome)
				}
				if n := len(w.fake.Issues(owner, repo)); n != 1 {
					t.Errorf("%s: %d issues, want 1", repo, n)
				}
			}
		})
	}
}
