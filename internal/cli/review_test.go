package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
)

// `ghonce pr review` makes the review with its inline comments from a
// JSON file in one request, once; without an event it is a usage error.
func TestPRReviewVerb(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	w.fake.SetRef(testOwner, testName, "feat", w.fake.AddCommit(testOwner, testName, "main"))
	n := w.fake.SeedPR(testOwner, testName, "someone", fixtures.SeedPR{Title: "Feature", Head: "feat"})
	file := filepath.Join(t.TempDir(), "comments.json")
	if err := os.WriteFile(file, []byte(`[{"path": "main.go", "line": 3, "body": "shorter?"}, {"path": "a.go", "line": 9, "start_line": 7, "side": "RIGHT", "body": "why?"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"pr", "review", "1", "--task", "R1", "--repo", testRepo, "--request-changes", "--body", "Two notes.", "--comments", file, "--json"}
	for i, want := range []string{`"outcome":"created"`, `"outcome":"skipped"`} {
		if o := w.run("", nil, args...); o.code != failure.ExitOK || !strings.Contains(o.stdout, want) {
			t.Fatalf("run %d: exit %d, stdout %s, stderr %s; want %s", i, o.code, o.stdout, o.stderr, want)
		}
	}
	rvs := w.fake.Reviews(testOwner, testName, n)
	if len(rvs) != 1 || rvs[0].State != "CHANGES_REQUESTED" || rvs[0].Comments != 2 {
		t.Fatalf("reviews %+v, want one with its 2 inline comments", rvs)
	}
	if o := w.run("", nil, "pr", "review", "1", "--task", "R2", "--repo", testRepo, "--body", "x"); o.code != failure.ExitUsage || !strings.Contains(o.stderr, "--approve") {
		t.Fatalf("no event: exit %d, stderr %s; want a usage error naming the events", o.code, o.stderr)
	}
	if o := w.run("", nil, "pr", "review", "1", "--task", "R3", "--repo", testRepo, "--comment", "--body", "x", "--comments", file+".missing"); o.code != failure.ExitUsage {
		t.Fatalf("a missing comments file: exit %d, stderr %s; want usage", o.code, o.stderr)
	}
}
