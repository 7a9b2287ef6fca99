package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// realGhWorld is a ghWorld whose next gh on PATH is the real one, with a
// config directory of its own; tests skip, saying why, when gh is not
// installed (apt-get install gh).
func realGhWorld(t *testing.T) (*ghWorld, string, []string) {
	t.Helper()
	real, err := exec.LookPath("gh")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the real gh is not installed; under CI=true the shim's comparison with it must run (.ci/run installs it with apt-get install gh)")
		}
		t.Skip("the real gh is not installed (apt-get install gh): the shim's comparison with it is not run")
	}
	w := newGhWorld(t)
	cfg := filepath.Join(w.dir, "gh-config")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	hosts := "github.com:\n    oauth_token: " + token + "\n    user: " + login + "\n    git_protocol: https\n"
	if err := os.WriteFile(filepath.Join(cfg, "hosts.yml"), []byte(hosts), 0o600); err != nil {
		t.Fatal(err)
	}
	env := slices.Concat(w.envWithout([]string{"PATH", "GH_TOKEN"}), []string{
		"PATH=" + w.shim + ":" + filepath.Dir(real) + ":" + os.Getenv("PATH"),
		"GH_CONFIG_DIR=" + cfg, "GH_PROMPT_DISABLED=1", "GH_NO_UPDATE_NOTIFIER=1",
		"GHONCE_TASK=ISSUE-42", "GHONCE_LEDGER=" + w.ledger,
		"GIT_DIR=" + filepath.Join(w.checkout, ".git"), "GIT_CONFIG_NOSYSTEM=1",
	})
	return w, real, env
}

// Through the shim, what the real gh prints for commands the shim does not
// guard is exactly what it prints when run directly.
func TestRealGhThroughTheShimIsTheRealGh(t *testing.T) {
	w, real, env := realGhWorld(t)
	for _, args := range [][]string{{"--version"}, {"pr", "create", "--help"}, {"issue", "comment", "--help"}, {"no-such-command"}} {
		direct := exec.Command(real, args...)
		direct.Env = env
		var dout, derr strings.Builder
		direct.Stdout, direct.Stderr = &dout, &derr
		_ = direct.Run()
		o := w.ghStdin(env, "", args...)
		if o.Exit != direct.ProcessState.ExitCode() || o.Stdout != dout.String() || o.Stderr != derr.String() {
			t.Fatalf("gh %q through the shim: exit %d stdout %q stderr %q; the real gh: exit %d stdout %q stderr %q",
				args, o.Exit, o.Stdout, o.Stderr, direct.ProcessState.ExitCode(), dout.String(), derr.String())
		}
	}
}

// With no token in the environment the shim takes the real gh's stored
// login (`gh auth token`), and refuses a missing body in gh's words, with
// gh's exit code.
func TestRealGhTokenAndWords(t *testing.T) {
	w, real, env := realGhWorld(t)
	o := w.ghStdin(env, "", "issue", "create", "-t", "Flaky test", "-b", "Seen twice.")
	wantExit(t, o, 0, "gh issue create with the real gh's stored token")
	if !strings.HasPrefix(o.Stdout, w.fake.WebURL()+repo+"/issues/") || strings.Count(o.Stdout, "\n") != 1 {
		t.Fatalf("stdout %q, want the issue's URL alone", o.Stdout)
	}
	for _, args := range [][]string{{"pr", "create", "-t", "x"}, {"issue", "create", "-t", "x"}} {
		direct := exec.Command(real, args...)
		direct.Env = env
		direct.Stdin = strings.NewReader("")
		out, _ := direct.CombinedOutput()
		want, _, _ := strings.Cut(string(out), " when not running interactively")
		want, _, _ = strings.Cut(want, " (or")
		o := w.ghStdin(env, "", args...)
		if !strings.Contains(want, "must provide") || !strings.Contains(o.Stderr, want) || o.Exit != direct.ProcessState.ExitCode() {
			t.Fatalf("gh %q: the shim says %q (exit %d); the real gh says %q (exit %d)", args, o.Stderr, o.Exit, out, direct.ProcessState.ExitCode())
		}
	}
}
