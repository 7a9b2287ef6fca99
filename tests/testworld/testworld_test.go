package testworld_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/tests/testworld"
)

// A test at the engine's layer, in the shared world: the agent pushes a
// branch, the world's engine opens a pull request for it, and a second
// engine on the same ledger (a restarted process) skips it. GitHub holds
// one. With testworld.Postgres() the ledger is a fresh Postgres schema.
func TestEngineInTheWorld(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []testworld.Option
	}{
		{"sqlite", nil},
		{"postgres", []testworld.Option{testworld.Postgres()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := testworld.New(t, tc.opts...)
			w.Push("fix-42")
			a := reconcile.Action{Task: "ISSUE-42", Step: "open-pr", Repo: testworld.Repo,
				Spec: reconcile.PR{Base: testworld.Branch, Head: "fix-42", Title: "Fix"}}
			for _, want := range []outcome.Outcome{outcome.Created, outcome.Skipped} {
				p, err := reconcile.Prepare(a)
				if err != nil {
					t.Fatal(err)
				}
				res, err := w.Engine().Do(context.Background(), p)
				if err != nil || res.Outcome != want {
					t.Fatalf("Do: %v, %v; want %s", res, err, want)
				}
			}
			if n := len(w.GitHub.PullRequests(testworld.Owner, testworld.Name)); n != 1 {
				t.Errorf("%d pull requests, want 1", n)
			}
		})
	}
}

// Each token is its user's, and a push moves the branch the client reads.
func TestUsersAndPush(t *testing.T) {
	w := testworld.New(t)
	ctx := context.Background()
	for tok, want := range map[string]string{testworld.Token: testworld.Login, testworld.StrangerToken: testworld.Stranger} {
		if got, err := w.Client(ghcheck.Options{Token: tok}).Login(ctx); err != nil || got != want {
			t.Errorf("login of a token: %q, %v; want %q", got, err, want)
		}
	}
	head := w.Push("fix-42")
	if head == w.Main {
		t.Fatal("the push made no commit")
	}
	if sha, err := w.Client(ghcheck.Options{}).ResolveCommit(ctx, ghcheck.Repo{Owner: testworld.Owner, Name: testworld.Name}, "fix-42"); err != nil || sha != head {
		t.Fatalf("fix-42 is %q, %v; want the pushed %s", sha, err, head)
	}
}

// A child process gets the world's token and fake, and a home inside the
// test's directory.
func TestEnv(t *testing.T) {
	w := testworld.New(t)
	cmd := exec.Command("/usr/bin/env")
	cmd.Env = w.Env()
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"GH_TOKEN=" + testworld.Token, "GITHUB_API_URL=" + w.GitHub.URL(), "HOME=" + w.Dir} {
		if !strings.Contains(string(out), want+"\n") {
			t.Errorf("the child's environment lacks %s", strings.SplitN(want, "=", 2)[0])
		}
	}
}
