package docs_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// The snippets of README.md and docs/guide/library.md read GH_TOKEN,
// GITHUB_API_URL and GHONCE_LEDGER as a task runner would; the examples
// point them at the fake GitHub and a fresh ledger.
func withEnv(env map[string]string) (restore func()) {
	old := map[string]*string{}
	for k, v := range env {
		if was, ok := os.LookupEnv(k); ok {
			old[k] = &was
		} else {
			old[k] = nil
		}
		os.Setenv(k, v)
	}
	return func() {
		for k, v := range old {
			if v == nil {
				os.Unsetenv(k)
			} else {
				os.Setenv(k, *v)
			}
		}
	}
}

// fakeGitHub is the world of the examples: o/r with main and fix-42 pushed.
func fakeGitHub() *fixtures.Server {
	gh := fixtures.NewServer(fixtures.Options{})
	gh.AddUser("agent-bot", "example-token")
	gh.AddRepo("o", "r", "main")
	gh.SetRef("o", "r", "fix-42", gh.AddCommit("o", "r", "main"))
	return gh
}

// openPR is the Go library quick start of README.md and docs/guide/library.md.
func openPR(ctx context.Context, title, body string) error {
	// GHONCE_LEDGER, else ghonce's default file; postgres://… is a shared ledger.
	loc, err := ledger.DefaultPath(os.Getenv)
	if err != nil {
		return err
	}
	l, err := store.Open(ctx, loc, store.Options{Create: store.CreateForAction})
	if err != nil {
		return err // "open ledger …: …" names the ledger and what is wrong
	}
	defer l.Close()
	gh, err := ghcheck.New(ghcheck.Options{BaseURL: os.Getenv("GITHUB_API_URL"), Token: os.Getenv("GH_TOKEN")})
	if err != nil {
		return fmt.Errorf("github client: %w", err)
	}
	eng := reconcile.New(reconcile.Config{Ledger: l, GitHub: gh, LedgerNew: l.CannotVouch()})

	action, err := reconcile.Prepare(reconcile.Action{Task: "ISSUE-42", Step: "open-pr", Repo: "o/r",
		Spec: reconcile.PR{Base: "main", Head: "fix-42", Title: title, Body: body}})
	if err != nil {
		return fmt.Errorf("open pr: %w", err) // bad input: nothing was recorded or sent
	}
	res, err := eng.Do(ctx, action)
	var unconfirmed *outcome.UnconfirmedError
	switch {
	case errors.As(err, &unconfirmed):
		return err // it may exist: run the same action again later, never a different one
	case err != nil:
		return fmt.Errorf("open pr: %w", err)
	}
	fmt.Println(res.Outcome, "PR", res.Number)
	return nil
}

// The Go library quick start, run as a restarted task runner would: the
// first run opens the pull request on a ledger it creates, the second
// (reworded, as a model's retry often is) gets it back.
func Example_library() {
	gh := fakeGitHub()
	defer gh.Close()
	dir, err := os.MkdirTemp("", "ghonce-docs-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	defer withEnv(map[string]string{
		"GH_TOKEN": "example-token", "GITHUB_API_URL": gh.URL(), "GHONCE_LEDGER": filepath.Join(dir, "ledger.db"),
	})()

	ctx := context.Background()
	if err := openPR(ctx, "Fix crash on start", "Fixes #1."); err != nil {
		log.Fatal(err)
	}
	if err := openPR(ctx, "Fix the crash on start", "Fixes #1, reworded."); err != nil {
		log.Fatal(err)
	}
	fmt.Println("pull requests on GitHub:", len(gh.PullRequests("o", "r")))
	// Output:
	// created PR 1
	// skipped PR 1
	// pull requests on GitHub: 1
}

// sharedEngine is the snippet of docs/guide/postgres.md: the ledger from
// the same string as the CLI's, created on first use.
func sharedEngine(ctx context.Context, gh reconcile.GitHub) (*reconcile.Engine, func() error, error) {
	loc, err := ledger.DefaultPath(os.Getenv) // GHONCE_LEDGER (a path, or postgres://…), else the default file
	if err != nil {
		return nil, nil, err
	}
	l, err := store.Open(ctx, loc, store.Options{Create: store.CreateForAction})
	if err != nil {
		return nil, nil, err
	}
	eng := reconcile.New(reconcile.Config{Ledger: l, GitHub: gh, LedgerNew: l.CannotVouch()})
	return eng, l.Close, nil
}

// The Postgres guide's snippet on a ledger that does not exist yet: a fresh
// schema of the Postgres named by GHONCE_TEST_POSTGRES when it is set (as
// `make test` sets it), else a fresh SQLite file. Store.Open creates it.
func Example_sharedLedger() {
	gh := fakeGitHub()
	defer gh.Close()
	location := filepath.Join(os.TempDir(), fmt.Sprintf("ghonce-docs-%d.db", os.Getpid()))
	drop := func() error { return os.Remove(location) }
	if dsn := os.Getenv("GHONCE_TEST_POSTGRES"); dsn != "" {
		var err error
		if location, drop, err = pgtest.NewSchema(dsn, "docs_example"); err != nil {
			log.Fatal(err)
		}
	}
	defer drop()
	defer withEnv(map[string]string{"GHONCE_LEDGER": location})()

	ctx := context.Background()
	client, err := ghcheck.New(ghcheck.Options{BaseURL: gh.URL(), Token: "example-token"})
	if err != nil {
		log.Fatal(err)
	}
	for range 2 {
		eng, closeLedger, err := sharedEngine(ctx, client)
		if err != nil {
			log.Fatal(err)
		}
		action, err := reconcile.Prepare(reconcile.Action{Task: "ISSUE-42", Step: "open-pr", Repo: "o/r",
			Spec: reconcile.PR{Base: "main", Head: "fix-42", Title: "Fix", Body: "Fixes #1."}})
		if err != nil {
			log.Fatal(err)
		}
		res, err := eng.Do(ctx, action)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(res.Outcome, "PR", res.Number)
		closeLedger()
	}
	// Output:
	// created PR 1
	// skipped PR 1
}

// The quick start with GHONCE_LEDGER unset opens ghonce's default ledger,
// as the CLI does; with nowhere to put one, its error says so once, in a
// library's words (no flag: a library caller has none).
func TestLibraryQuickStartWithoutGHONCE_LEDGER(t *testing.T) {
	gh := fakeGitHub()
	defer gh.Close()
	state := t.TempDir()
	restore := withEnv(map[string]string{"GH_TOKEN": "example-token", "GITHUB_API_URL": gh.URL(),
		"GHONCE_LEDGER": "", "GITHUB_ACTIONS": "", "XDG_STATE_HOME": state, "HOME": ""})
	defer restore()
	if err := openPR(context.Background(), "Fix crash on start", "Fixes #1."); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(state, "ghonce", "ledger.db")); err != nil {
		t.Fatalf("the default ledger: %v", err)
	}

	os.Setenv("XDG_STATE_HOME", "")
	err := openPR(context.Background(), "Fix crash on start", "Fixes #1.")
	if err == nil {
		t.Fatal("no error with no ledger location at all")
	}
	if msg := err.Error(); strings.Contains(msg, "--") || strings.Count(msg, "ledger:") > 1 {
		t.Errorf("error %q: want the library's words, once, naming no flag", msg)
	}
}
