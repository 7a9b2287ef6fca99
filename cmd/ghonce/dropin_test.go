package main_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/ghonce/ghonce/tests/harness"
)

// docBlock returns the first fenced block of lang in docs/guide/drop-in.md.
func docBlock(t *testing.T, lang string) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/guide/drop-in.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```"+lang+"\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatalf("docs/guide/drop-in.md has no ```%s block", lang)
	}
	return block
}

// dropInWorld is a ghWorld with ghonce itself on PATH (as an install puts
// it) and a stand-in agent, named as the doc names it, that does what an
// agent does with a shell: gh pr create.
func dropInWorld(t *testing.T, agent string) (*ghWorld, string) {
	t.Helper()
	w := newGhWorld(t)
	tools := filepath.Join(w.dir, "tools")
	if err := os.MkdirAll(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(tools, "ghonce")); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nexec gh pr create --title \"Fix issue 42\" --body \"Generated fix for $0.\"\n"
	if err := os.WriteFile(filepath.Join(tools, agent), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return w, tools
}

func (w *ghWorld) sh(script string, env []string) harness.Outcome {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o, err := w.runner.Run(ctx, "/bin/sh", []string{"-c", script}, env, nil)
	recordOutput(w.t, []string{"sh", "-c", script}, o.Stdout, o.Stderr)
	if err != nil {
		w.t.Fatal(err)
	}
	return o
}

func (w *ghWorld) onePR(t *testing.T) string {
	t.Helper()
	var urls []string
	for _, p := range w.fake.PullRequests(owner, name) {
		if p.Author == login {
			urls = append(urls, w.fake.WebURL()+repo+"/pull/"+strconv.Itoa(p.Number))
		}
	}
	if len(urls) != 1 {
		t.Fatalf("GitHub holds %d pull requests of ours, want 1", len(urls))
	}
	return urls[0]
}

// The shell lines of docs/guide/drop-in.md, run as written, twice (an
// agent restarted on the same task): one pull request, its URL printed
// each time.
func TestDropInDocShellSnippet(t *testing.T) {
	w, tools := dropInWorld(t, "claude")
	env := append(w.envWithout([]string{"PATH"}), "PATH="+tools+":"+w.stub+":"+os.Getenv("PATH"),
		"GIT_DIR="+filepath.Join(w.checkout, ".git"), "GIT_CONFIG_NOSYSTEM=1", "GH_STUB_LOG="+w.log)
	script := docBlock(t, "sh")
	for run := 1; run <= 2; run++ {
		o := w.sh(script, env)
		wantExit(t, o, 0, "the doc's shell snippet")
		if url := w.onePR(t); o.Stdout != url+"\n" {
			t.Fatalf("run %d: stdout %q, want the pull request's URL %q", run, o.Stdout, url)
		}
	}
	if _, err := os.Stat(w.log + ".argv"); err == nil {
		t.Fatal("the real gh was run for gh pr create")
	}
}

// The doc's Actions steps, run as a runner would run them (each run: in
// its own shell, GITHUB_PATH read between steps, the step's env), on two
// fresh runners (a re-run of the job: a new RUNNER_TEMP, so a new ledger):
// one pull request.
func TestDropInDocActionsSnippet(t *testing.T) {
	w, tools := dropInWorld(t, "codex")
	var steps []struct {
		Name string            `yaml:"name"`
		Run  string            `yaml:"run"`
		Env  map[string]string `yaml:"env"`
	}
	if err := yaml.Unmarshal([]byte(docBlock(t, "yaml")), &steps); err != nil || len(steps) == 0 {
		t.Fatalf("the doc's Actions steps: %v", err)
	}
	event := filepath.Join(w.dir, "event.json")
	if err := os.WriteFile(event, []byte(`{"issue":{"number":42}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	expr := strings.NewReplacer("${{ github.event.issue.number }}", "42", "${{ github.token }}", token)
	for attempt := 1; attempt <= 2; attempt++ {
		runner := filepath.Join(w.dir, "runner-"+strconv.Itoa(attempt))
		if err := os.MkdirAll(runner, 0o755); err != nil {
			t.Fatal(err)
		}
		ghPath := filepath.Join(runner, "github_path")
		base := append(w.envWithout([]string{"PATH", "GH_TOKEN"}), "GITHUB_ACTIONS=true", "GITHUB_WORKFLOW=agent", "GITHUB_JOB=fix",
			"GITHUB_RUN_ID=1", "GITHUB_EVENT_PATH="+event, "RUNNER_TEMP="+runner, "GITHUB_PATH="+ghPath,
			"GIT_DIR="+filepath.Join(w.checkout, ".git"), "GIT_CONFIG_NOSYSTEM=1", "GH_STUB_LOG="+w.log)
		var out string
		for _, st := range steps {
			path := tools + ":" + w.stub + ":" + os.Getenv("PATH")
			if b, err := os.ReadFile(ghPath); err == nil {
				for _, l := range strings.Fields(string(b)) {
					path = l + ":" + path
				}
			}
			env := append(base, "PATH="+path)
			for k, v := range st.Env {
				env = append(env, k+"="+expr.Replace(v))
			}
			o := w.sh(expr.Replace(st.Run), env)
			wantExit(t, o, 0, "step "+st.Name)
			out = o.Stdout
		}
		if url := w.onePR(t); out != url+"\n" {
			t.Fatalf("attempt %d: the agent step printed %q, want %q", attempt, out, url)
		}
	}
}
