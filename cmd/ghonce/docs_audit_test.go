package main_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/tests/audittest"
	"github.com/ghonce/ghonce/tests/harness"
)

// TestAuditGuideRecipesRun runs the sh blocks of docs/guide/audit.md, in
// order, in one bash -e, with the built binary on PATH, against the audit
// corpus: they must succeed, the duplicate PRs end closed, and running
// them again changes nothing on GitHub.
func TestAuditGuideRecipesRun(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the audit guide's recipes need jq")
		}
		t.Skip("SKIP: the audit guide's recipes need jq, which is not installed")
	}
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(root, "docs", "guide", "audit.md"))
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	in := false
	sc := bufio.NewScanner(bytes.NewReader(page))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case !in && line == "```sh":
			in = true
			fmt.Fprintf(&script, "# docs/guide/audit.md:%d\n", n)
		case in && line == "```":
			in = false
		case in:
			script.WriteString(line + "\n")
		}
	}
	if !strings.Contains(script.String(), "ghonce audit") {
		t.Fatalf("no ghonce audit recipe in docs/guide/audit.md")
	}
	fake := fixtures.NewServer(fixtures.Options{})
	t.Cleanup(fake.Close)
	corpus := audittest.Seed(fake, "octo", "corpus")
	work := t.TempDir()
	env := append(harness.CleanEnv(), "GH_TOKEN="+audittest.AgentToken, "GITHUB_API_URL="+fake.URL(), "GH_REPO=octo/corpus",
		"HOME="+work, "XDG_STATE_HOME="+filepath.Join(work, "xdg"), "GHONCE_LEDGER="+filepath.Join(work, "ledger.db"),
		"PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	run := func(round string) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script.String())
		cmd.Dir, cmd.Env = work, env
		// A process a recipe leaves running would hold the output pipe,
		// and CombinedOutput would wait for it past bash's exit and ctx.
		cmd.WaitDelay = 10 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the audit guide's recipes (%s): %v\n%s\nscript:\n%s", round, err, out, script.String())
		}
		t.Logf("%s:\n%s", round, out)
	}
	run("first run")
	open := map[int]bool{}
	for _, p := range fake.PullRequests("octo", "corpus") {
		open[p.Number] = p.State == "open"
	}
	for _, g := range corpus.Groups {
		if g.Kind != "pr" {
			continue
		}
		for _, d := range g.Duplicates {
			var n int
			fmt.Sscanf(d, "#%d", &n)
			if open[n] {
				t.Errorf("after the guide's --apply, duplicate PR %s is open", d)
			}
		}
	}
	writes := fake.Writes()
	run("run again")
	if fake.Writes() != writes {
		t.Errorf("running the guide's recipes again wrote %d times", fake.Writes()-writes)
	}
}
