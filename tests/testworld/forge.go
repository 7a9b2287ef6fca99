package testworld

// Forged claims: what anyone who can push to a repository can write to
// its repository ledger (refs/ghonce/claims/...), here as the stranger, in
// the format a ghonce ledger writes or in any other.

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	ghledger "github.com/ghonce/ghonce/ledger/github"
)

// ClaimMessage is a commit message as a ghonce ledger of format v writes
// it, holding entry (its fields by their JSON names) and no history.
func ClaimMessage(v int, entry map[string]any) string {
	b, err := json.Marshal(map[string]any{"ghonce_ledger": v, "entry": entry, "history": []any{}})
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("ghonce ledger: %v\n\n%s\n", entry["status"], b)
}

// Forge makes the stranger point the claim ref of key in owner/name at a
// new commit whose message is msg, whatever the ref held; ref, when not
// empty, names another ref to point instead. It returns the ref.
func Forge(t testing.TB, fake *fixtures.Server, repo, key, ref, msg string) string {
	t.Helper()
	c, err := ghcheck.New(ghcheck.Options{BaseURL: fake.URL(), Token: StrangerToken, Budget: ghcheck.Budget{NoPacing: true}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := ghcheck.ParseRepo(repo)
	if err != nil {
		t.Fatal(err)
	}
	l, err := ghledger.Open(ghledger.Options{Client: c, Repo: r})
	if err != nil {
		t.Fatal(err)
	}
	if ref == "" {
		ref = l.RefOf(key)
	}
	cm, err := c.CreateGitCommit(t.Context(), r, msg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteRefNamed(t.Context(), r, ref); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateRefAt(t.Context(), r, ref, cm.SHA); err != nil {
		t.Fatal(err)
	}
	return ref
}
