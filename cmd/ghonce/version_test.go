package main_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/tests/harness"
)

// The action's build names the commit it was built from, though the
// runner's copy of the action has no .git: the tarball GitHub serves is
// `git archive` output (export-subst filled in internal/cli/archival.txt),
// which this test makes from the tree under test and builds with action.yml's
// own "Locate ghonce" and "Build ghonce" scripts, as a runner does.
func TestActionBuildNamesItsCommit(t *testing.T) {
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).Output()
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("git %s: %v", strings.Join(args, " "), err)
			}
			t.Skipf("SKIPPED: not a git checkout with git on PATH (git %s: %v)", strings.Join(args, " "), err)
		}
		return strings.TrimSpace(string(out))
	}
	// The tree as it is: uncommitted changes to tracked files too.
	commit := git("stash", "create")
	if commit == "" {
		commit = git("rev-parse", "HEAD")
	}
	src := t.TempDir()
	archive := exec.Command("git", "-C", root, "archive", "--format=tar", commit)
	untar := exec.Command("tar", "-x", "-C", src)
	untar.Stdin, _ = archive.StdoutPipe()
	if err := untar.Start(); err != nil {
		t.Fatal(err)
	}
	if err := archive.Run(); err != nil {
		t.Fatalf("git archive: %v", err)
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("untar: %v", err)
	}
	if _, err := os.Stat(filepath.Join(src, ".git")); err == nil {
		t.Fatal("the archive has a .git: the test would not show what a runner sees")
	}

	a := readAction(t)
	script := func(id string) string {
		for _, st := range a.Runs.Steps {
			if st.ID == id {
				return st.Run
			}
		}
		t.Fatalf("action.yml has no step with id %s", id)
		return ""
	}
	goenv := func(k string) string {
		out, err := exec.Command(goTool(), "env", k).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out))
	}
	runner := t.TempDir()
	output := filepath.Join(runner, "output")
	bin := filepath.Join(runner, "ghonce-action", "bin")
	env := append(os.Environ(),
		"GHONCE_SRC="+src, "RUNNER_TEMP="+runner, "GITHUB_OUTPUT="+output, "BIN="+bin,
		// This machine's caches stand in for the restored ones (offline).
		"GOCACHE="+goenv("GOCACHE"), "GOMODCACHE="+goenv("GOMODCACHE"), "GOPROXY=off",
		"PATH="+filepath.Dir(goTool())+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	for _, id := range []string{"where", "build"} {
		cmd := exec.Command("bash", "-c", script(id))
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("step %s: %v\n%s", id, err, stderr.String())
		}
		t.Logf("step %s took %s (this machine's Go caches standing in for the restored ones)", id, time.Since(start).Round(time.Millisecond))
	}
	outs, err := os.ReadFile(output)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(outs), "commit="+commit+"\n") {
		t.Errorf("the Locate step's outputs %q do not key the cache by commit %s", outs, commit)
	}
	out, err := exec.Command(filepath.Join(bin, "ghonce"), "version", "--json").Output()
	if err != nil {
		t.Fatalf("ghonce version: %v", err)
	}
	var v struct{ Version, Revision string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("ghonce version --json: %q: %v", out, err)
	}
	t.Logf("the action's build says: version %s, commit %s", v.Version, v.Revision)
	if v.Revision != commit {
		t.Errorf("the action's build names commit %q, want %s", v.Revision, commit)
	}
	if v.Version == "" {
		t.Error("the action's build names no version")
	}
}

// goTool is the go command of the toolchain running the test.
func goTool() string { return filepath.Join(runtime.GOROOT(), "bin", "go") }
