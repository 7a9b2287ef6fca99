package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// A task runner: open a pull request, comment on the issue it fixes, and
// notify a service GitHub knows nothing about (a guarded command, done by
// package offgithub's engine, on the same ledger). Run it twice, as a
// restarted runner would: the second run does nothing again.
//
// The fake GitHub (package fixtures) stands in for api.github.com; with a
// real token, leave ghcheck.Options.BaseURL empty.
func Example() {
	ctx := context.Background()
	gh := fixtures.NewServer(fixtures.Options{})
	defer gh.Close()
	gh.AddUser("agent-bot", "example-token")
	gh.AddRepo("octo-org", "hello-world", "main")
	gh.SetRef("octo-org", "hello-world", "fix-42", gh.AddCommit("octo-org", "hello-world", "main")) // the agent's git push
	issue := gh.SeedIssue("octo-org", "hello-world", "reporter", fixtures.SeedIssue{Title: "Crash on start"})

	dir, err := os.MkdirTemp("", "ghonce-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sent := filepath.Join(dir, "sent.log") // what the "service" received

	steps := []reconcile.Action{
		{Task: "ISSUE-42", Step: "open-pr", Repo: "octo-org/hello-world", Spec: reconcile.PR{
			Base: "main", Head: "fix-42", Title: "Fix crash on start", Body: "Fixes #1.",
		}},
		{Task: "ISSUE-42", Step: "comment", Repo: "octo-org/hello-world", Spec: reconcile.Comment{
			Number: issue, Body: "Opened a fix.",
		}},
	}
	// GHONCE_KEY is the key: hand it to the service, and let Check ask
	// whether it was received (exit 0 yes, 1 no).
	notify := offgithub.Action{Task: "ISSUE-42", Step: "notify", Spec: offgithub.Exec{
		Argv:  []string{"/bin/sh", "-c", `echo "$GHONCE_KEY" >> "$0"`, sent},
		Check: fmt.Sprintf(`test -f '%s' && grep -q "$GHONCE_KEY" '%s'`, sent, sent),
	}}
	report := func(step string, res *outcome.Result) {
		fmt.Printf("%s: %s %s", step, res.Outcome, res.Kind)
		if res.Number != 0 {
			fmt.Printf(" #%d", res.Number)
		}
		fmt.Println()
	}
	runTask := func() error {
		l, err := sqlite.Open(ctx, filepath.Join(dir, "ledger.db"), sqlite.Options{})
		if err != nil {
			return err
		}
		defer l.Close()
		client, err := ghcheck.New(ghcheck.Options{BaseURL: gh.URL(), Token: "example-token"})
		if err != nil {
			return err
		}
		eng := reconcile.New(reconcile.Config{Ledger: l, GitHub: client, LedgerNew: l.Created()})
		for _, a := range steps {
			// Prepare refuses bad input before anything is recorded.
			p, err := reconcile.Prepare(a)
			if err != nil {
				return err
			}
			res, err := eng.Do(ctx, p)
			if err != nil {
				return err
			}
			report(a.Step, res)
		}
		p, err := offgithub.Prepare(notify)
		if err != nil {
			return err
		}
		res, err := offgithub.New(offgithub.Config{Ledger: l, LedgerNew: l.Created()}).Do(ctx, p)
		if err != nil {
			return err
		}
		report(notify.Step, res)
		return nil
	}

	fmt.Println("first run:")
	if err := runTask(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("restarted:")
	if err := runTask(); err != nil {
		log.Fatal(err)
	}
	b, _ := os.ReadFile(sent)
	fmt.Printf("pull requests: %d, comments: %d, notifications: %d\n",
		len(gh.PullRequests("octo-org", "hello-world")), len(gh.Comments("octo-org", "hello-world", issue)), strings.Count(string(b), "\n"))
	// Output:
	// first run:
	// open-pr: created pr #2
	// comment: created comment
	// notify: created exec
	// restarted:
	// open-pr: skipped pr #2
	// comment: skipped comment
	// notify: skipped exec
	// pull requests: 1, comments: 1, notifications: 1
}

// GitHub creates the pull request and the answer is lost on the way back
// (the connection drops, the process is killed): Do cannot tell whether it
// exists and says so with an *UnconfirmedError, leaving the entry
// attempting. The rerun, reworded and on another branch as an agent's
// retry often is, finds the first pull request instead of opening another.
func ExampleEngine_Do_crashAndResume() {
	ctx := context.Background()
	gh := fixtures.NewServer(fixtures.Options{})
	defer gh.Close()
	gh.AddUser("agent-bot", "example-token")
	gh.AddRepo("octo-org", "hello-world", "main")
	gh.SetRef("octo-org", "hello-world", "fix-42", gh.AddCommit("octo-org", "hello-world", "main"))
	gh.SetRef("octo-org", "hello-world", "fix-42-v2", gh.AddCommit("octo-org", "hello-world", "main"))
	// The first create is stored, then the connection drops unanswered.
	gh.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath("POST", "/repos/octo-org/hello-world/pulls"), Kind: fixtures.DropAfterCommit})

	dir, err := os.MkdirTemp("", "ghonce-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	l, err := sqlite.Open(ctx, filepath.Join(dir, "ledger.db"), sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	client, err := ghcheck.New(ghcheck.Options{BaseURL: gh.URL(), Token: "example-token"})
	if err != nil {
		log.Fatal(err)
	}
	eng := reconcile.New(reconcile.Config{Ledger: l, GitHub: client, LedgerNew: l.Created()})
	openPR := func(head, body string) *reconcile.Prepared {
		p, err := reconcile.Prepare(reconcile.Action{Task: "ISSUE-42", Step: "open-pr", Repo: "octo-org/hello-world",
			Spec: reconcile.PR{Base: "main", Head: head, Title: "Fix crash on start", Body: body}})
		if err != nil {
			log.Fatal(err)
		}
		return p
	}

	_, err = eng.Do(ctx, openPR("fix-42", "Fixes #1."))
	var unconfirmed *outcome.UnconfirmedError
	fmt.Println("first attempt unconfirmed:", errors.As(err, &unconfirmed))

	res, err := eng.Do(ctx, openPR("fix-42-v2", "Fixes #1: check the config for nil."))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("retry: %s #%d, payload changed: %v\n", res.Outcome, res.Number, res.PayloadChanged)
	fmt.Println("pull requests on GitHub:", len(gh.PullRequests("octo-org", "hello-world")))
	// Output:
	// first attempt unconfirmed: true
	// retry: found #1, payload changed: true
	// pull requests on GitHub: 1
}

// After a crash, Reconcile settles every attempting entry against GitHub
// (found → done, absent → failed, so the next run creates it) without
// creating anything.
func ExampleEngine_Reconcile() {
	ctx := context.Background()
	gh := fixtures.NewServer(fixtures.Options{})
	defer gh.Close()
	gh.AddUser("agent-bot", "example-token")
	gh.AddRepo("octo-org", "hello-world", "main")
	issues := fixtures.MatchMethodPath("POST", "/repos/octo-org/hello-world/issues")
	// Two creates that leave ghonce unsure: one stored by GitHub, one not.
	gh.Inject(fixtures.Fault{Match: issues, Kind: fixtures.DropAfterCommit})
	gh.Inject(fixtures.Fault{Match: issues, Kind: fixtures.DropBeforeCommit})

	dir, err := os.MkdirTemp("", "ghonce-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	l, err := sqlite.Open(ctx, filepath.Join(dir, "ledger.db"), sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	client, err := ghcheck.New(ghcheck.Options{BaseURL: gh.URL(), Token: "example-token"})
	if err != nil {
		log.Fatal(err)
	}
	eng := reconcile.New(reconcile.Config{Ledger: l, GitHub: client, LedgerNew: l.Created()})
	for _, task := range []string{"ISSUE-1", "ISSUE-2"} {
		p, err := reconcile.Prepare(reconcile.Action{Task: task, Step: "follow-up", Repo: "octo-org/hello-world",
			Spec: reconcile.Issue{Title: "Follow-up for " + task, Body: "Flaky test."}})
		if err != nil {
			log.Fatal(err)
		}
		_, err = eng.Do(ctx, p)
		fmt.Printf("%s: %v\n", task, err != nil)
	}

	settled, err := eng.Reconcile(ctx, reconcile.Filter{})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range settled {
		fmt.Printf("%s %s: %s → %s (%s)\n", s.Task, s.Kind, s.From, s.To, s.Why)
	}
	fmt.Println("issues on GitHub:", len(gh.Issues("octo-org", "hello-world")))
	// Output:
	// ISSUE-1: true
	// ISSUE-2: true
	// ISSUE-1 issue: attempting → done (found on GitHub)
	// ISSUE-2 issue: attempting → failed (not found: the next run will create it)
	// issues on GitHub: 1
}
