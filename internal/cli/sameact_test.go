package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/failure"
)

// A done key and another title (issue 37): exit 7, nothing created, and
// with --json the facts a runner acts on without reading prose: the
// existing issue (URL, number, title, when it was made), this run's title,
// and the step for another act, which files it.
func TestSameOrAnotherIsExitSevenWithTheFacts(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	issue := func(title string, extra ...string) cliRun {
		return w.run("", nil, append([]string{"issue", "create", "--task", "T", "--title", title, "--body", "b", "--repo", testRepo}, extra...)...)
	}
	if o := issue("Release 1.4.0"); o.code != 0 {
		t.Fatalf("first: exit %d: %s", o.code, o.stderr)
	}
	o := issue("Release v1.4.0", "--json")
	var f failure.Failure
	if err := json.Unmarshal([]byte(o.stdout), &f); err != nil || o.code != failure.ExitSameOrAnother {
		t.Fatalf("reworded: exit %d, %q (%v); want %d and one object", o.code, o.stdout, err, failure.ExitSameOrAnother)
	}
	url := w.fake.WebURL() + testRepo + "/issues/1"
	if e := f.Existing; f.Error.Kind != failure.SameOrAnother || e == nil || e.URL != url || e.Number != 1 || e.Text != "Release 1.4.0" ||
		e.MadeAt == nil || time.Since(*e.MadeAt) > time.Hour || f.Text != "Release v1.4.0" || f.NewStep != "issue-create-release-v1-4-0" || f.State != "done" {
		t.Fatalf("--json: %+v (existing %+v); want the facts", f, f.Existing)
	}
	for _, says := range []string{url, `"Release 1.4.0"`, `"Release v1.4.0"`, "it is done: nothing to do", "--step issue-create-release-v1-4-0"} {
		if !strings.Contains(o.stderr, says) {
			t.Errorf("stderr does not say %q:\n%s", says, o.stderr)
		}
	}
	if n := len(w.fake.Issues(testOwner, testName)); n != 1 {
		t.Fatalf("%d issues after exit 7, want 1", n)
	}
	if o := issue("Release v1.4.0", "--step", f.NewStep); o.code != 0 || strings.TrimSpace(o.stdout) == url {
		t.Fatalf("with the step named: exit %d, %q; want a second issue", o.code, o.stdout)
	}
}

// Inside GitHub Actions: a re-run (attempt 2, a fresh runner's empty
// ledger) whose LLM-written title was reworded exits 0 with the issue
// attempt 1 made, when GitHub's record of the run says attempt 1 made it;
// without that record (a token without actions: read) it is exit 7, with
// an ::error:: annotation that says both ways on.
func TestActionsRerunWithARewordedTitleSucceeds(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	actions := func(attempt string) map[string]string {
		dir := t.TempDir()
		return map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_WORKFLOW": "triage", "GITHUB_JOB": "file", "GITHUB_RUN_ID": "7",
			"GITHUB_RUN_ATTEMPT": attempt, "GITHUB_REPOSITORY": testRepo, "GHONCE_LEDGER": filepath.Join(dir, "ledger.db"),
			"GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary.md"), "GITHUB_OUTPUT": filepath.Join(dir, "output")}
	}
	issue := func(env map[string]string, title string) cliRun {
		return w.run("", env, "issue", "create", "--title", title, "--body", "b", "--repo", testRepo)
	}
	first := issue(actions("1"), "Nightly build failed on arm64")
	if first.code != 0 {
		t.Fatalf("attempt 1: exit %d: %s", first.code, first.stderr)
	}
	made := w.fake.Issues(testOwner, testName)[0].CreatedAt
	unknown := issue(actions("2"), "Nightly arm64 build is failing")
	if unknown.code != failure.ExitSameOrAnother || !strings.Contains(unknown.stderr, "::error title=ghonce (exit 7)::") || !strings.Contains(unknown.stderr, "nothing to do") {
		t.Fatalf("attempt 2, GitHub silent on the run: exit %d: %s; want 7 and an annotation", unknown.code, unknown.stderr)
	}
	w.fake.SeedRunAttempt(testOwner, testName, 7, 1, made.Add(-time.Minute), made.Add(time.Minute))
	rerun := issue(actions("2"), "Nightly arm64 build is failing")
	if rerun.code != 0 || rerun.stdout != first.stdout || !strings.Contains(rerun.stderr, "attempt 1 of this GitHub Actions run made it") {
		t.Fatalf("attempt 2: exit %d, stdout %q, stderr %s; want the first issue, exit 0", rerun.code, rerun.stdout, rerun.stderr)
	}
	if n := len(w.fake.Issues(testOwner, testName)); n != 1 {
		t.Fatalf("%d issues, want 1", n)
	}
}
