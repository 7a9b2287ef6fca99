package guard_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/ledger/store"
)

// An agent loop opens a pull request with go-github v66 and dies right
// after GitHub created it, before the answer arrived (here the fake GitHub
// drops the answer; TestKillAfterCommitRerunMakesOne kills a real
// process). Rerun with the same task, the loop gets the same pull request
// back and GitHub holds one. The only change to the bot is its client.
func Example() {
	gh := fixtures.NewServer(fixtures.Options{}) // stands in for api.github.com
	defer gh.Close()
	gh.AddUser("agent-bot", "example-token")
	gh.AddRepo("octo-org", "hello-world", "main")
	gh.SetRef("octo-org", "hello-world", "fix-42", gh.AddCommit("octo-org", "hello-world", "main"))
	gh.Inject(fixtures.Fault{Kind: fixtures.DropAfterCommit, Match: func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/pulls")
	}})
	dir, err := os.MkdirTemp("", "guard-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	agent := func() (*github.PullRequest, error) {
		ctx := context.Background()
		l, err := sqlite.Open(ctx, filepath.Join(dir, "ledger.db"), sqlite.Options{})
		if err != nil {
			return nil, err
		}
		defer l.Close()
		t, err := guard.New(http.DefaultTransport, guard.Options{Ledger: l, LedgerNew: l.Created()})
		if err != nil {
			return nil, err
		}
		client := github.NewClient(&http.Client{Transport: t}).WithAuthToken("example-token")
		client.BaseURL, _ = client.BaseURL.Parse(gh.URL()) // leave out for api.github.com

		ctx = guard.WithStep(ctx, "ISSUE-42", "open-pr")
		pr, _, err := client.PullRequests.Create(ctx, "octo-org", "hello-world", &github.NewPullRequest{
			Title: github.String("Fix crash on start"), Head: github.String("fix-42"), Base: github.String("main"),
			Body: github.String("Fixes #1."),
		})
		return pr, err
	}

	if _, err := agent(); err != nil {
		fmt.Println("first run died after the create")
	}
	pr, err := agent()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("rerun: pull request #%d\n", pr.GetNumber())
	fmt.Println("pull requests on GitHub:", len(gh.PullRequests("octo-org", "hello-world")))
	// Output:
	// first run died after the create
	// rerun: pull request #1
	// pull requests on GitHub: 1
}

// A bot's write, guarded: the lines docs/guide/drop-in.md quotes, run here
// against the fake GitHub.
func ExampleNew() {
	fake := fixtures.NewServer(fixtures.Options{}) // stands in for api.github.com
	defer fake.Close()
	fake.AddUser("agent-bot", "example-token")
	fake.AddRepo("octo-org", "hello-world", "main")
	fake.SetRef("octo-org", "hello-world", "fix-42", fake.AddCommit("octo-org", "hello-world", "main"))
	dir, err := os.MkdirTemp("", "guard-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx, ledgerPath, token := context.Background(), filepath.Join(dir, "ledger.db"), "example-token"

	for run := 1; run <= 2; run++ {
		l, err := store.Open(ctx, ledgerPath, store.Options{Create: store.CreateForAction})
		if err != nil {
			log.Fatal(err)
		}
		t, err := guard.New(http.DefaultTransport, guard.Options{Ledger: l})
		if err != nil {
			log.Fatal(err)
		}
		gh := github.NewClient(&http.Client{Transport: t}).WithAuthToken(token)
		gh.BaseURL, _ = gh.BaseURL.Parse(fake.URL()) // leave out for api.github.com
		pr, _, err := gh.PullRequests.Create(guard.WithStep(ctx, "issue-42", "open-pr"), "octo-org", "hello-world",
			&github.NewPullRequest{Title: github.String("Fix #42"), Head: github.String("fix-42"), Base: github.String("main")})
		if err != nil {
			log.Fatal(err)
		}
		l.Close()
		fmt.Printf("run %d: pull request #%d\n", run, pr.GetNumber())
	}
	fmt.Println("pull requests on GitHub:", len(fake.PullRequests("octo-org", "hello-world")))
	// Output:
	// run 1: pull request #1
	// run 2: pull request #1
	// pull requests on GitHub: 1
}
