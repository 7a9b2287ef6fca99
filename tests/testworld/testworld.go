// Package testworld is the world ghonce's tests run in: a fake GitHub
// (fixtures.Server) on loopback holding one repository with a default
// branch and a first commit, our user with its token and a stranger with
// theirs, and a ledger location of the test's own (a SQLite file in
// t.TempDir(), or a fresh Postgres schema). From it a test takes what its
// layer needs: a ghcheck client, an engine on the ledger, or the
// environment of a ghonce child process.
//
// A package's own helper wraps a World and adds only what that package
// needs (a harness.Runner, an MCP session, a seeded issue); see
// docs/contributing/testing.md.
package testworld

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/tests/harness"
)

// The repository and the users every World holds.
const (
	Owner  = "octo-org"
	Name   = "hello-world"
	Repo   = Owner + "/" + Name
	Branch = "main" // the default branch

	Login = "agent-bot" // our identity: the token's login
	// Token authenticates Login. Every token here starts with
	// SecretPrefix, so a leak into an output, an error or a ledger file is
	// found by a plain substring search.
	Token = SecretPrefix + "_c0ffee1d9a7b"

	Stranger      = "mallory" // another user, whose artifacts never count as ours
	StrangerToken = SecretPrefix + "_mallory_51f2"

	SecretPrefix = "ghp_GHONCEtestSECRET"
)

// World is one test's fake GitHub and ledger. Everything in it is closed or
// removed when the test ends.
type World struct {
	// GitHub is the fake GitHub.
	GitHub *fixtures.Server
	// Main is the head of Branch when the world was made.
	Main string
	// Dir is a directory of the test's own (t.TempDir()).
	Dir string
	// Ledger is the ledger's location, not yet opened: a file under Dir
	// (which does not exist yet) or, with Postgres, a URL naming a schema
	// no other test uses (created on first open, dropped with the test).
	Ledger string

	t testing.TB
}

// Option changes how New makes a World.
type Option func(*config)

type config struct {
	fake     fixtures.Options
	postgres bool
}

// Fake makes the fake GitHub from o (a clock, rate limits, a listener).
func Fake(o fixtures.Options) Option { return func(c *config) { c.fake = o } }

// Postgres puts the ledger in a fresh schema of the database that
// GHONCE_TEST_POSTGRES names. Without it the test is skipped, or fails
// under CI=true (pgtest.DSN).
func Postgres() Option { return func(c *config) { c.postgres = true } }

// New makes a World for t.
func New(t testing.TB, opts ...Option) *World {
	t.Helper()
	var c config
	for _, o := range opts {
		o(&c)
	}
	fake := fixtures.NewServer(c.fake)
	t.Cleanup(fake.Close)
	fake.AddUser(Login, Token)
	fake.AddUser(Stranger, StrangerToken)
	w := &World{GitHub: fake, Main: fake.AddRepo(Owner, Name, Branch), Dir: t.TempDir(), t: t}
	w.Ledger = filepath.Join(w.Dir, "state", "ledger.db")
	if c.postgres {
		w.Ledger = pgtest.Schema(t)
	}
	return w
}

// Push stands in for the agent's git push: a new commit on Branch's head,
// on a new branch. It returns the commit.
func (w *World) Push(branch string) string {
	sha := w.GitHub.AddCommit(Owner, Name, Branch)
	w.GitHub.SetRef(Owner, Name, branch, sha)
	return sha
}

// SeedExamples makes what every kind's Face.Example names: the stranger's
// issue #1 and pull request #2 from branch feature (whose head adds
// change-mallory.txt, one line), and branch fix one commit ahead of
// Branch. Call it first on a new World.
func (w *World) SeedExamples() {
	w.Push("fix")
	w.GitHub.SetRef(Owner, Name, "feature", w.GitHub.AddCommitBy(Owner, Name, Branch, Stranger))
	w.GitHub.SeedIssue(Owner, Name, Stranger, fixtures.SeedIssue{Title: "It crashes on start"})
	w.GitHub.SeedPR(Owner, Name, Stranger, fixtures.SeedPR{Head: "feature", Title: "A feature"})
}

// Client is a ghcheck client on the fake GitHub made from o, whose BaseURL
// is the fake's and whose Token, when empty, is Token.
func (w *World) Client(o ghcheck.Options) *ghcheck.Client {
	w.t.Helper()
	o.BaseURL = w.GitHub.URL()
	if o.Token == "" {
		o.Token = Token
	}
	c, err := ghcheck.New(o)
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// OpenLedger opens the ledger, creating it as an action would, as a
// restarted process does: each call is a new handle on the same ledger,
// closed when the test ends.
func (w *World) OpenLedger() *store.Opened {
	w.t.Helper()
	l, err := store.Open(context.Background(), w.Ledger, store.Options{Create: store.CreateForAction})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = l.Close() })
	return l
}

// Engine opens the ledger (OpenLedger) and returns an engine on it and on a
// client with Token. Settle is off (the fake answers after it has stored a
// write, so nothing is in flight); mod changes the rest.
func (w *World) Engine(mod ...func(*reconcile.Config)) *reconcile.Engine {
	w.t.Helper()
	l := w.OpenLedger()
	cfg := reconcile.Config{Ledger: l, GitHub: w.Client(ghcheck.Options{}), LedgerNew: l.Created, Settle: -1}
	for _, m := range mod {
		m(&cfg)
	}
	return reconcile.New(cfg)
}

// Env is the environment of a ghonce child process in this world: the
// caller's (harness.CleanEnv) with Token as GH_TOKEN, the fake as
// GITHUB_API_URL, and HOME and XDG_STATE_HOME inside Dir, so that even a
// run without --ledger never touches the user's real ledger.
func (w *World) Env() []string {
	return append(harness.CleanEnv(), "GH_TOKEN="+Token, "GITHUB_API_URL="+w.GitHub.URL(),
		"HOME="+w.Dir, "XDG_STATE_HOME="+filepath.Join(w.Dir, "xdg"))
}
