package github_test

import (
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	ghledger "github.com/ghonce/ghonce/ledger/github"
	"github.com/ghonce/ghonce/ledger/ledgertest"
	"github.com/ghonce/ghonce/tests/testworld"
)

// world is a fake GitHub with one repository and a client of it, and a
// stranger who can push refs to it (testworld.Forge). The
// fake's clock is now: GitHub's clock, which the ledger reads from the
// Date of its answers and the dates of its commits.
func world(t *testing.T, now func() time.Time) (*fixtures.Server, *ghcheck.Client) {
	t.Helper()
	s := fixtures.NewServer(fixtures.Options{Now: now})
	t.Cleanup(s.Close)
	s.AddUser("octo", "tok-octo")
	s.AddUser(testworld.Stranger, testworld.StrangerToken) // who can push, too
	s.AddRepo("octo", "repo", "main")
	c, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: "tok-octo", Budget: ghcheck.Budget{NoPacing: true}})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

func open(t *testing.T, c *ghcheck.Client) *ghledger.Ledger {
	t.Helper()
	l, err := ghledger.Open(ghledger.Options{Client: c, Repo: ghcheck.Repo{Owner: "octo", Name: "repo"}})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestConformance runs the one conformance suite against the repository
// ledger on the fake GitHub, whose clock is the suite's: the ledger never
// reads the machine's. Its claims are public to whoever reads the
// repository: it keeps only a lock and a record (ledgertest.LockOnly).
func TestConformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T, now func() time.Time) ledger.Ledger {
		_, c := world(t, now)
		return open(t, c)
	}, ledgertest.LockOnly())
}
