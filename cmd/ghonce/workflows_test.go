package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	ghledger "github.com/ghonce/ghonce/ledger/github"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/tests/harness"
)

// exampleJob is one job of a workflow under docs/examples/workflows.
type exampleJob struct {
	Steps []struct {
		Name string            `yaml:"name"`
		If   string            `yaml:"if"`
		Uses string            `yaml:"uses"`
		With map[string]string `yaml:"with"`
	} `yaml:"steps"`
}

func readExampleJob(t *testing.T, file, job string) exampleJob {
	t.Helper()
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "docs", "examples", "workflows", file))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]exampleJob `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("parse %s: %v", file, err)
	}
	j, ok := wf.Jobs[job]
	if !ok {
		t.Fatalf("%s has no job %q", file, job)
	}
	return j
}

// runsAfter reports whether the runner runs a step with condition cond
// when failed says whether an earlier step failed: with no condition
// (success()) only when none did; always() and !cancelled() either way.
func runsAfter(t *testing.T, cond string, failed bool) bool {
	t.Helper()
	switch strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(cond), "${{"), "}}")) {
	case "", "success()":
		return !failed
	case "always()", "!cancelled()":
		return true
	case "failure()":
		return failed
	}
	t.Fatalf("step condition %q: this test does not evaluate it", cond)
	return false
}

// reconcile.yml pages either way: with an entry no run can settle (a
// guarded command without --check, killed, left an hour ago), its
// reconcile step fails the job (exit 3), and the step after it still
// runs, as the runner evaluates its if:, and fails with exit 5 and an
// ::error:: annotation: the page. Issue 40: the stale step never ran.
func TestReconcileWorkflowPagesEitherWay(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wantExit(t, w.exec(nil, nil, "init", "--ledger", w.ledger), 0, "init")
	o := w.exec(nil, nil, "exec", "--ledger", w.ledger, "--task", "T", "--step", "deploy", "--", "/bin/sh", "-c", "kill -9 $$")
	wantExit(t, o, 3, "a guarded command killed by a signal")
	ageAnHour(t, w.ledger)

	steps := readExampleJob(t, "reconcile.yml", "reconcile").Steps
	j := newJob(w, `{}`)
	a := readAction(t)
	failed, paged := false, false
	for _, st := range steps {
		if !runsAfter(t, st.If, failed) {
			t.Logf("step %q skipped", st.Name)
			continue
		}
		in := map[string]string{"token": actionsToken}
		for k, v := range st.With {
			in[k] = strings.ReplaceAll(v, "${{ secrets.GHONCE_LEDGER_URL }}", w.ledger)
		}
		o := j.actionStep(a, in, nil)
		switch in["command"] {
		case "reconcile":
			wantExit(t, o, 3, "the reconcile step, with an entry it cannot settle")
		case "status":
			wantExit(t, o, 5, "the stale step, after reconcile left the entry an hour old")
			paged = strings.Contains(o.Stderr, "::error title=ghonce (exit 5)::")
		}
		failed = failed || o.Exit != 0
	}
	if !paged {
		t.Fatal("reconcile.yml did not page (no ::error:: from `status --stale`) for an entry that waits for a person")
	}
}

// ageAnHour makes the ledger's only attempting entry look an hour old, as
// if it had been left then: a handle whose clock is an hour behind claims
// and releases it.
func ageAnHour(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	l, err := sqlite.Open(ctx, path, sqlite.Options{Now: func() time.Time { return time.Now().Add(-time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	es, err := l.List(ctx, ledger.ListParams{Status: ledger.Attempting})
	if err != nil || len(es) != 1 {
		t.Fatalf("list: %d attempting, %v; want 1", len(es), err)
	}
	e := es[0]
	c, err := l.Claim(ctx, ledger.ClaimParams{Key: e.Key, Task: e.Task, Step: e.Step, Kind: e.Kind, Target: e.Target,
		Owner: ledger.Owner{ID: "test/age"}, Lease: time.Minute, Why: "the test ages it an hour"})
	if err != nil || c.State != ledger.ClaimAcquired {
		t.Fatalf("claim to age it: %v, %v", c, err)
	}
	if _, err := l.Finish(ctx, ledger.FinishParams{Key: e.Key, Fence: c.Entry.Fence, Status: ledger.Attempting, Error: e.LastError, Why: "release"}); err != nil {
		t.Fatal(err)
	}
}

// repo-ledger.yml files one failure report per failed nightly build,
// however many of its runs fail: the schedule's, a dispatch beside it (a
// run of its own), and a re-run of either. Its task names the commit,
// which they share, not the run, which they do not (issue 40: the
// comment promised one issue for a dispatch beside the schedule; they
// made two).
func TestRepoLedgerWorkflowReportsOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var report map[string]string
	for _, st := range readExampleJob(t, "repo-ledger.yml", "build").Steps {
		if st.Uses != "" && strings.HasPrefix(st.Uses, "ghonce/ghonce@") {
			report, _ = st.With, runsAfter(t, st.If, true)
		}
	}
	if report == nil || report["ledger"] != "github" {
		t.Fatalf("repo-ledger.yml has no ghonce step on the repository ledger: %v", report)
	}
	a := readAction(t)
	sha := w.fake.AddCommit(owner, name, "main")
	j := newJob(w, `{}`)
	expr := regexp.MustCompile(`\$\{\{\s*([a-z_.]+)\s*\}\}`)
	for _, run := range []struct {
		event       string
		id, attempt int
	}{{"schedule", 100, 1}, {"workflow_dispatch", 200, 1}, {"schedule", 100, 2}} {
		github := map[string]string{"github.run_id": strconv.Itoa(run.id), "github.sha": sha, "github.server_url": "https://github.com", "github.repository": repo}
		in := map[string]string{"token": actionsToken}
		for k, v := range report {
			in[k] = expr.ReplaceAllStringFunc(v, func(m string) string {
				val, ok := github[expr.FindStringSubmatch(m)[1]]
				if !ok {
					t.Fatalf("%s: %s is an expression this test does not evaluate", k, m)
				}
				return val
			})
		}
		// Each on a fresh runner (the job's next), as that run and attempt.
		j.extraEnv = []string{"GITHUB_EVENT_NAME=" + run.event, "GITHUB_RUN_ID=" + strconv.Itoa(run.id),
			"GITHUB_RUN_ATTEMPT=" + strconv.Itoa(run.attempt), "GITHUB_SHA=" + sha}
		wantExit(t, j.actionStep(a, in, nil), 0, fmt.Sprintf("the report of the %s run %d, attempt %d", run.event, run.id, run.attempt))
	}
	if n := len(w.fake.Issues(owner, name)); n != 1 {
		t.Fatalf("%d failure reports for one failed nightly build, want 1", n)
	}
}

// A run that died on another runner holds its step's claim in the
// repository ledger until its lease ends. Through the action's own step:
// the next run, with the default wait, is told whose claim it is, since
// and until when, that ghonce cannot see whether it still runs, and that
// the wait: input waits it out (exit 4, a warning); with wait: longer than
// the lease it takes the claim over when the lease ends and creates the
// issue once. GitHub's clock runs 60 times faster here, so the 2-minute
// lease ends in 2 seconds.
func TestActionWaitsOutADeadRunnersLease(t *testing.T) {
	t.Parallel()
	base := time.Now()
	fast := func() time.Time { return base.Add(60 * time.Since(base)) }
	w := newWorldWith(t, fixtures.Options{Now: fast})
	j := newJob(w, `{}`)
	p, err := reconcile.Prepare(reconcile.Action{Task: "T-DEAD", Step: "issue-create", Repo: repo, Spec: reconcile.Issue{Title: "t", Body: "b"}})
	if err != nil {
		t.Fatal(err)
	}
	// The dead runner's claim, as it wrote it before it died mid-create.
	c, err := ghcheck.New(ghcheck.Options{BaseURL: w.fake.URL(), Token: actionsToken})
	if err != nil {
		t.Fatal(err)
	}
	l, err := ghledger.Open(ghledger.Options{Client: c, Repo: ghcheck.Repo{Owner: owner, Name: name}})
	if err != nil {
		t.Fatal(err)
	}
	dead := ledger.Owner{ID: "runner-7/4242/5eed", Host: "runner-7", PID: 4242, Boot: "another-machine", PIDNS: 1, Start: 1}
	if _, err := l.Claim(context.Background(), ledger.ClaimParams{Key: p.Key(), Task: "T-DEAD", Step: "issue-create", Kind: "issue", Repo: repo,
		Owner: dead, Lease: 2 * time.Minute, Sending: true, Why: "claim"}); err != nil {
		t.Fatal(err)
	}

	a := readAction(t)
	in := map[string]string{"command": "issue-create", "task": "T-DEAD", "title": "t", "body": "b", "token": actionsToken, "ledger": "github", "wait": "1ms"}
	o := j.actionStep(a, in, nil)
	wantExit(t, o, 4, "a run while a dead runner's lease lasts")
	// A repository ledger's claim names its holder opaquely (h:…), and
	// nothing of its host or process.
	for _, want := range []string{"::warning title=ghonce (exit 4)::", "held by h:", "claimed 20",
		"cannot see whether a holder on another machine still runs", "its lease ends 20", "wait: "} {
		if !strings.Contains(o.Stderr, want) {
			t.Errorf("the exit-4 run does not say %q:\n%s", want, o.Stderr)
		}
	}
	in["wait"] = "3m"
	o = j.actionStep(a, in, nil)
	wantExit(t, o, 0, "a run with wait: past the dead runner's lease")
	if out := j.outputs(); out["outcome"] != "created" {
		t.Fatalf("outputs %q, want created", out)
	}
	if n := len(w.fake.Issues(owner, name)); n != 1 {
		t.Fatalf("%d issues, want 1", n)
	}
}

// The action runs a release's binary only once gh has verified its
// build-provenance attestation: made by the release workflow of the
// action's repository at the action's own commit, on GitHub's runners.
// A binary that does not verify is not installed (a warning; the action
// builds from source), nor is one when gh is missing (a notice). curl and
// gh are stubs on PATH; the test plays the step as the runner would.
func TestActionRunsOnlyAnAttestedRelease(t *testing.T) {
	t.Parallel()
	const commit = "0123456789abcdef0123456789abcdef01234567"
	a := readAction(t)
	for _, c := range []struct {
		name     string
		gh       string // the stub's exit status; "" for no gh at all
		ok       bool
		annotate string
	}{
		{"verified", "0", true, ""},
		{"not verified", "1", false, "::warning title=ghonce::the release's ghonce_v1.2.3_"},
		{"no gh", "", false, "::notice title=ghonce::gh is not installed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			j := newJob(w, `{}`)
			env := j.freshRunner()
			stubs := filepath.Join(j.runnerDir, "stubs")
			bin := filepath.Join(j.runnerDir, "temp", "ghonce-action", "bin")
			ghArgs := filepath.Join(j.runnerDir, "gh-args")
			// The release's tarball, with a stand-in binary in it.
			rel := t.TempDir()
			if err := os.WriteFile(filepath.Join(rel, "ghonce"), []byte("#!/bin/sh\necho released\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			tarball := filepath.Join(j.runnerDir, "release.tar.gz")
			if out, err := exec.Command("tar", "-czf", tarball, "-C", rel, "ghonce").CombinedOutput(); err != nil {
				t.Fatalf("tar: %v: %s", err, out)
			}
			// Only what the step needs on PATH: the system's tools, and the stubs.
			if err := os.MkdirAll(stubs, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, tool := range []string{"uname", "tr", "mktemp", "rm", "mkdir", "tar", "gzip", "tail", "cat", "cp"} {
				p, err := exec.LookPath(tool)
				if err != nil {
					t.Skipf("no %s here: %v", tool, err)
				}
				if err := os.Symlink(p, filepath.Join(stubs, tool)); err != nil {
					t.Fatal(err)
				}
			}
			writeStub := func(name, script string) {
				if err := os.WriteFile(filepath.Join(stubs, name), []byte("#!/bin/bash\n"+script), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			writeStub("curl", `while [ $# -gt 0 ]; do if [ "$1" = -o ]; then out=$2; shift; fi; shift; done; cp "`+tarball+`" "$out"`+"\n")
			if c.gh != "" {
				writeStub("gh", `printf '%s\n' "$@" > "`+ghArgs+`"; echo "verification says `+c.name+`" >&2; exit `+c.gh+"\n")
			}
			exprs := map[string]string{
				"steps.where.outputs.tag": "v1.2.3", "steps.where.outputs.commit": commit, "github.action_repository": "ghonce/ghonce",
				"steps.where.outputs.bin": bin, "github.token": actionsToken,
			}
			o := runActionStep(t, j, a, "prebuilt", exprs, append(env, "PATH="+stubs), nil)
			wantExit(t, o, 0, "the fetch step (it never fails the job)")
			_, err := os.Stat(filepath.Join(bin, "ghonce"))
			if installed := err == nil; installed != c.ok || (j.outputs()["ok"] == "true") != c.ok {
				t.Fatalf("binary installed %v, ok=%q; want %v\n%s%s", installed, j.outputs()["ok"], c.ok, o.Stdout, o.Stderr)
			}
			if c.annotate != "" && !strings.Contains(o.Stdout, c.annotate) {
				t.Errorf("stdout does not say %q:\n%s", c.annotate, o.Stdout)
			}
			if c.gh == "" {
				return
			}
			b, err := os.ReadFile(ghArgs)
			if err != nil {
				t.Fatal(err)
			}
			args := strings.Join(strings.Fields(string(b)), " ")
			for _, want := range []string{"attestation verify ", "--repo ghonce/ghonce", "--signer-workflow ghonce/ghonce/.github/workflows/release.yml",
				"--source-digest " + commit, "--deny-self-hosted-runners"} {
				if !strings.Contains(args, want) {
					t.Errorf("gh %s: want %q", args, want)
				}
			}
		})
	}
}

func mustLook(t *testing.T, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Skipf("no %s here: %v", tool, err)
	}
	return p
}

// runActionStep runs action.yml's step id as the runner would: its env:
// with each ${{ NAME }} replaced by exprs[NAME] (any other is a test
// error), its script run by bash -e -o pipefail, in env; killOn as
// harness.Runner.Run takes it. An input's value arrives verbatim, never
// parsed again.
func runActionStep(t *testing.T, j *job, a actionYAML, id string, exprs map[string]string, env []string, killOn func(*fixtures.Commit) bool) harness.Outcome {
	t.Helper()
	re := regexp.MustCompile(`\$\{\{\s*([a-z_.-]+)\s*\}\}`)
	for _, st := range a.Runs.Steps {
		if st.ID != id {
			continue
		}
		for k, v := range st.Env {
			env = append(env, k+"="+re.ReplaceAllStringFunc(v, func(m string) string {
				val, ok := exprs[re.FindStringSubmatch(m)[1]]
				if !ok {
					t.Fatalf("step %s: env %s = %q: %s is an expression this test does not evaluate", id, k, v, m)
				}
				return val
			}))
		}
		script := filepath.Join(j.runnerDir, id+".sh")
		if err := os.WriteFile(script, []byte(st.Run), 0o700); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		// The script execs ghonce, so the process the harness kills is
		// ghonce itself.
		o, err := j.w.runner.Run(ctx, mustLook(t, "bash"), []string{"--noprofile", "--norc", "-eo", "pipefail", script}, env, killOn)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	t.Fatalf("action.yml has no step with id %s", id)
	return harness.Outcome{}
}
