package store

import (
	"context"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/ledgertest"
)

// perRepoWorld is a fake GitHub with the repositories the conformance
// suite's entries name, and the per-repository ledger on it.
func perRepoWorld(t *testing.T, now func() time.Time, def string) (*fixtures.Server, *perRepo) {
	t.Helper()
	s := fixtures.NewServer(fixtures.Options{Now: now})
	t.Cleanup(s.Close)
	s.AddUser("octo", "tok-octo")
	for _, r := range [][2]string{{"octo", "repo"}, {"o", "a"}, {"o", "b"}} {
		s.AddRepo(r[0], r[1], "main")
		s.AddCollaborator(r[0], r[1], "octo")
	}
	c, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: "tok-octo", Budget: ghcheck.Budget{NoPacing: true}})
	if err != nil {
		t.Fatal(err)
	}
	return s, newPerRepo(c, def, nil)
}

// TestPerRepoConformance: the ledger "github" of ghonce mcp, which keeps
// each claim in its action's repository, keeps the whole contract.
func TestPerRepoConformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T, now func() time.Time) ledger.Ledger {
		// The default repository keeps the store's facts (meta).
		_, l := perRepoWorld(t, now, "octo/repo")
		return l
	}, ledgertest.LockOnly())
}

// TestPerRepoClaimsInTheActionsRepository: a claim is a ref in the
// repository its action names, found from a fresh process by its key.
func TestPerRepoClaimsInTheActionsRepository(t *testing.T) {
	s, l := perRepoWorld(t, nil, "")
	ctx := context.Background()
	for _, r := range []string{"o/a", "o/b"} {
		c, err := l.Claim(ctx, ledger.ClaimParams{Key: "k-" + r, Task: "t", Step: "s", Kind: "issue", Repo: r, Lease: time.Minute, Owner: ledger.Owner{ID: "o1"}})
		if err != nil || c.State != ledger.ClaimCreated {
			t.Fatalf("claim in %s: %v, %+v", r, err, c)
		}
	}
	for _, r := range [][2]string{{"o", "a"}, {"o", "b"}, {"octo", "repo"}} {
		n := 0
		for _, ref := range s.Refs(r[0], r[1]) {
			if len(ref) > len("refs/ghonce/claims/") && ref[:len("refs/ghonce/claims/")] == "refs/ghonce/claims/" {
				n++
			}
		}
		want := 1
		if r[1] == "repo" {
			want = 0
		}
		if n != want {
			t.Errorf("%s/%s holds %d claims, want %d", r[0], r[1], n, want)
		}
	}
	if _, err := l.Claim(ctx, ledger.ClaimParams{Key: "k", Task: "t", Step: "s", Kind: "exec", Lease: time.Minute, Owner: ledger.Owner{ID: "o1"}}); err == nil {
		t.Error("a claim naming no repository, with no default, was taken")
	}
}
