package main_test

// Tests that play a GitHub Actions runner exactly: the GITHUB_* variables,
// an event payload file, the step's GITHUB_OUTPUT and GITHUB_STEP_SUMMARY
// files, RUNNER_TEMP, and Actions' GITHUB_TOKEN (an installation token whose
// GET /user answers 403). Every attempt runs on a fresh runner: a new
// RUNNER_TEMP, so a new, empty ledger, as on "Re-run failed jobs".

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/actions"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/harness"
)

// actionsToken stands for the job's GITHUB_TOKEN.
const actionsToken = "ghs_GHONCEtestACTIONS_5ecre7_0a1b2c3d"

const actionsBot = "github-actions[bot]"

// otherAppToken stands for another App's installation token.
const otherAppToken = "ghs_GHONCEtestSECRET_otherapp_77aa"

func init() { secrets = append(secrets, actionsToken, otherAppToken) }

// job is one workflow job whose attempts run on fresh runners.
type job struct {
	w         *world
	event     string // the payload file, the same for every attempt
	attempt   int
	started   time.Time // when the latest attempt started
	runnerDir string    // the latest attempt's runner
	extraEnv  []string
	runID     int64 // GITHUB_RUN_ID
}

func newJob(w *world, payload string) *job {
	w.t.Helper()
	w.fake.AddInstallationToken(actionsBot, actionsToken)
	ev := filepath.Join(w.dir, "event.json")
	if err := os.WriteFile(ev, []byte(payload), 0o600); err != nil {
		w.t.Fatal(err)
	}
	return &job{w: w, event: ev, runID: 4242}
}

// freshRunner starts the next attempt on a new runner and returns its
// environment. GitHub's record of the run says the attempt before ran
// until now, as a re-run starts once the attempt before it ended.
func (j *job) freshRunner() []string {
	j.w.t.Helper()
	if j.attempt > 0 {
		j.w.fake.SeedRunAttempt(owner, name, j.runID, j.attempt, j.started, time.Now())
	}
	j.attempt++
	j.started = time.Now()
	j.runnerDir = filepath.Join(j.w.dir, fmt.Sprintf("runner-%d-%d", j.runID, j.attempt))
	for _, d := range []string{"temp", "home"} {
		if err := os.MkdirAll(filepath.Join(j.runnerDir, d), 0o700); err != nil {
			j.w.t.Fatal(err)
		}
	}
	for _, f := range []string{"output", "summary"} {
		if err := os.WriteFile(filepath.Join(j.runnerDir, f), nil, 0o644); err != nil {
			j.w.t.Fatal(err)
		}
	}
	return slices.Concat(j.w.envWithout([]string{"GH_TOKEN", "HOME", "XDG_STATE_HOME"}),
		[]string{
			"GITHUB_ACTIONS=true", "CI=true",
			"GITHUB_WORKFLOW=agent", "GITHUB_JOB=fix", "GITHUB_RUN_ID=" + strconv.FormatInt(j.runID, 10),
			"GITHUB_RUN_ATTEMPT=" + strconv.Itoa(j.attempt), "GITHUB_EVENT_NAME=issues",
			"GITHUB_EVENT_PATH=" + j.event, "GITHUB_REPOSITORY=" + repo,
			"GITHUB_OUTPUT=" + filepath.Join(j.runnerDir, "output"),
			"GITHUB_STEP_SUMMARY=" + filepath.Join(j.runnerDir, "summary"),
			"RUNNER_TEMP=" + filepath.Join(j.runnerDir, "temp"),
			"HOME=" + filepath.Join(j.runnerDir, "home"),
			"GH_TOKEN=" + actionsToken,
		}, j.extraEnv)
}

func (j *job) outputs() map[string]string {
	j.w.t.Helper()
	o, err := actions.ReadOutputs(filepath.Join(j.runnerDir, "output"))
	if err != nil {
		j.w.t.Fatal(err)
	}
	return o
}

func (j *job) summary() string {
	b, _ := os.ReadFile(filepath.Join(j.runnerDir, "summary"))
	return string(b)
}

// run runs ghonce args as a step of a fresh attempt.
func (j *job) run(killOn func(*fixtures.Commit) bool, args ...string) harness.Outcome {
	j.w.t.Helper()
	return j.w.execEnv(killOn, j.freshRunner(), args...)
}

func killAt(k fixtures.CommitKind) func(*fixtures.Commit) bool {
	return func(c *fixtures.Commit) bool { return c.Kind == k }
}

// checkFoundOnRerun checks a re-run's step: exit 0, outputs naming the
// artifact, a summary line saying it was found on GitHub.
func (j *job) checkFoundOnRerun(o harness.Outcome, wantTask string) map[string]string {
	t := j.w.t
	t.Helper()
	wantExit(t, o, 0, fmt.Sprintf("attempt %d", j.attempt))
	out := j.outputs()
	if out["outcome"] != "found" || out["task"] != wantTask || !taskkey.Valid(out["key"]) || out["url"] == "" {
		t.Fatalf("attempt %d outputs %q, want outcome found, task %q, a key and a url", j.attempt, out, wantTask)
	}
	if s := j.summary(); !strings.Contains(s, "**found**") || !strings.Contains(s, "no record of it") || strings.Count(s, "\n") != 1 {
		t.Fatalf("attempt %d summary %q, want one line saying it was found on GitHub, not in the ledger", j.attempt, s)
	}
	if !strings.Contains(o.Stderr, "ghonce: task "+wantTask) {
		t.Fatalf("attempt %d did not print the task it chose:\n%s", j.attempt, o.Stderr)
	}
	return out
}

// Attempt 1 is killed after GitHub created the PR; attempts 2 and 3 run on
// fresh runners (no ledger) with reworded text, find it, and say that its
// text differs (compared with the PR itself).
func TestActionsRerunFindsThePR(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.push("fix-42")
	w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
	j := newJob(w, `{"action":"labeled","issue":{"number":1,"title":"It crashes"},"label":{"name":"agent"}}`)
	const task = "gha/agent/fix/#1"

	o := j.run(killAt(fakegithub.KindPull), "pr", "create", "--base", "main", "--head", "fix-42", "--title", "Fix the crash", "--body", "First wording.")
	if !o.Killed {
		t.Fatalf("attempt 1 not killed at the PR: exit %d\n%s", o.Exit, o.Stderr)
	}
	var first map[string]string
	for i, title := range []string{"Fix the crash on start", "Fix: crash on start (#1)"} {
		o := j.run(nil, "pr", "create", "--base", "main", "--head", "fix-42", "--title", title, "--body", fmt.Sprintf("Wording %d.", i+2))
		out := j.checkFoundOnRerun(o, task)
		if first == nil {
			first = out
		} else if out["number"] != first["number"] || out["url"] != first["url"] || out["key"] != first["key"] {
			t.Fatalf("attempt 3 outputs %q, attempt 2 %q: want the same PR", out, first)
		}
		if out["payload_changed"] != "true" || out["artifact_state"] != "open" {
			// A fresh runner compares with the PR it found: reworded.
			t.Fatalf("payload_changed %q, artifact_state %q on a fresh runner with reworded text; want true, open", out["payload_changed"], out["artifact_state"])
		}
	}
	prs := w.fake.PullRequests(owner, name)
	if len(prs) != 1 || prs[0].Author != actionsBot || strconv.Itoa(prs[0].Number) != first["number"] || !strings.HasSuffix(first["url"], "/pull/"+first["number"]) {
		t.Fatalf("PRs on GitHub %+v, outputs %q: want one, by %s, the one the outputs name", prs, first, actionsBot)
	}
}

// The same for a comment, with a stranger's look-alike carrying our marker
// already on the thread: it is not ours, so attempt 1 posts its own, and the
// re-runs find that one.
func TestActionsRerunFindsTheComment(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n := w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
	j := newJob(w, fmt.Sprintf(`{"action":"created","issue":{"number":%d},"comment":{"id":1,"body":"/agent"}}`, n))
	task := fmt.Sprintf("gha/agent/fix/#%d", n)
	key := w.key(task, "issue-comment", "comment", strconv.Itoa(n))
	w.fake.SeedComment(owner, name, n, stranger, taskkey.WithMarker(key, "Looks like ghonce's, is not."))

	o := j.run(killAt(fakegithub.KindComment), "issue", "comment", strconv.Itoa(n), "--body", "Working on it.")
	if !o.Killed {
		t.Fatalf("attempt 1 not killed at the comment: exit %d\n%s", o.Exit, o.Stderr)
	}
	for _, body := range []string{"Still working on it.", "Working on a fix."} {
		out := j.checkFoundOnRerun(j.run(nil, "issue", "comment", strconv.Itoa(n), "--body", body), task)
		var ours []fakegithub.Comment
		for _, c := range w.fake.Comments(owner, name, n) {
			if c.Author == actionsBot {
				ours = append(ours, c)
			}
		}
		if len(ours) != 1 || out["key"] != key || !strings.HasSuffix(out["url"], fmt.Sprintf("#issuecomment-%d", ours[0].ID)) {
			t.Fatalf("comments by %s: %+v; outputs %q: want one, the one the outputs name", actionsBot, ours, out)
		}
	}
	if got := len(w.fake.Comments(owner, name, n)); got != 2 {
		t.Fatalf("%d comments on the thread, want the stranger's and ours", got)
	}
}

// Errors in a workflow are workflow commands: ::error:: for a refusal, with
// no secret in them, and a summary line.
func TestActionsErrorsAreWorkflowCommands(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	j := newJob(w, `{"issue":{"number":99}}`)
	// A repository that does not exist: GitHub refuses, exit 1.
	j.extraEnv = []string{"GITHUB_REPOSITORY=" + owner + "/nope"}
	o := j.run(nil, "issue", "create", "--title", "t", "--body", "b")
	wantExit(t, o, 1, "issue create in a missing repository")
	if !regexp.MustCompile(`(?m)^::error title=ghonce \(exit 1\)::\S`).MatchString(o.Stderr) {
		t.Fatalf("no ::error:: command on stderr:\n%s", o.Stderr)
	}
	if s := j.summary(); !strings.Contains(s, "**failed** (exit 1)") {
		t.Fatalf("summary %q, want a failure line", s)
	}
	// No task can be derived from a payload that does not parse: exit 2.
	if err := os.WriteFile(j.event, []byte("{oops"), 0o600); err != nil {
		t.Fatal(err)
	}
	j.extraEnv = nil
	o = j.run(nil, "issue", "create", "--title", "t", "--body", "b")
	wantExit(t, o, 2, "a payload that does not parse")
	if !strings.Contains(o.Stderr, "::error title=ghonce (exit 2)::derive task") {
		t.Fatalf("no ::error:: for exit 2:\n%s", o.Stderr)
	}
}

// actionYAML is the part of action.yml the tests read.
type actionYAML struct {
	Inputs map[string]struct {
		Default string `yaml:"default"`
	} `yaml:"inputs"`
	Outputs map[string]struct {
		Value string `yaml:"value"`
	} `yaml:"outputs"`
	Runs struct {
		Using string `yaml:"using"`
		Steps []struct {
			ID    string            `yaml:"id"`
			If    string            `yaml:"if"`
			Uses  string            `yaml:"uses"`
			Shell string            `yaml:"shell"`
			Env   map[string]string `yaml:"env"`
			Run   string            `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"runs"`
}

func readAction(t *testing.T) actionYAML {
	t.Helper()
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var a actionYAML
	if err := yaml.Unmarshal(b, &a); err != nil {
		t.Fatalf("parse action.yml: %v", err)
	}
	return a
}

var inputRef = regexp.MustCompile(`\$\{\{\s*inputs\.([A-Za-z0-9_-]+)\s*\}\}`)

// The composite action passes inputs to its scripts through env: only, and
// every input it reads exists.
func TestActionYAMLKeepsInputsOutOfScripts(t *testing.T) {
	a := readAction(t)
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q, want composite", a.Runs.Using)
	}
	used := map[string]bool{}
	for _, st := range a.Runs.Steps {
		if strings.Contains(st.Run, "${{") {
			t.Errorf("step %q: an expression inside run: is script injection; pass it through env:", st.ID)
		}
		if st.Run != "" && st.Shell != "bash" {
			t.Errorf("step %q: shell %q, want bash", st.ID, st.Shell)
		}
		for _, v := range st.Env {
			for _, m := range inputRef.FindAllStringSubmatch(v, -1) {
				used[m[1]] = true
				if _, ok := a.Inputs[m[1]]; !ok {
					t.Errorf("step %q reads inputs.%s, which action.yml does not declare", st.ID, m[1])
				}
			}
		}
	}
	for in := range a.Inputs {
		if !used[in] {
			t.Errorf("input %q is declared but never reaches a step", in)
		}
	}
	for _, out := range []string{"key", "outcome", "number", "url", "sha"} {
		if !strings.Contains(a.Outputs[out].Value, "steps.ghonce.outputs."+out) {
			t.Errorf("output %q is %q, want the ghonce step's", out, a.Outputs[out].Value)
		}
	}
}

// actionStep runs the action's "ghonce" step as the runner would: its env:
// with ${{ inputs.* }} replaced by the inputs (or their defaults), its
// script run by bash, on a fresh runner of j, with the binary TestMain
// built where the build step puts it.
func (j *job) actionStep(a actionYAML, inputs map[string]string, killOn func(*fixtures.Commit) bool) harness.Outcome {
	j.w.t.Helper()
	return j.actionStepWith(a, inputs, bin, killOn)
}

// actionStepWith is actionStep with binary in the build step's place.
func (j *job) actionStepWith(a actionYAML, inputs map[string]string, binary string, killOn func(*fixtures.Commit) bool) harness.Outcome {
	t := j.w.t
	t.Helper()
	env := j.freshRunner()
	binDir := filepath.Join(j.runnerDir, "temp", "ghonce-action", "bin")
	if err := os.MkdirAll(binDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary, filepath.Join(binDir, "ghonce")); err != nil {
		t.Fatal(err)
	}
	exprs := map[string]string{"github.token": actionsToken}
	for name, in := range a.Inputs {
		exprs["inputs."+name] = strings.ReplaceAll(in.Default, "${{ github.token }}", actionsToken)
	}
	for name, v := range inputs {
		exprs["inputs."+name] = v
	}
	o := runActionStep(t, j, a, "ghonce", exprs, env, killOn)
	recordOutput(t, []string{"action step", inputs["command"]}, o.Stdout, o.Stderr)
	return o
}

// Through the composite action's own script: inputs full of shell
// metacharacters arrive verbatim, attempt 1 is killed after GitHub created
// the PR, attempt 2 on a fresh runner finds it, and the step's outputs name it.
func TestActionStepIsRerunSafeAndInjectionProof(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.push("agent/fix-1")
	n := w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
	j := newJob(w, fmt.Sprintf(`{"issue":{"number":%d}}`, n))
	a := readAction(t)
	canary := filepath.Join(w.dir, "pwned")
	title := `$(touch ` + canary + `)"; echo pwned; ` + "`touch " + canary + "`" + ` 'it''s' $HOME ${{ github.token }}`
	body := "Line one with $(touch " + canary + ")\n`touch " + canary + "` and \"quotes\" and 'single'\n\\n not a newline; %0A not either\nEOF\n"
	inputs := map[string]string{
		"command": "pr-create", "base": "main", "head": "agent/fix-1", "title": title, "body": body,
		"labels": "bug, agent\nneeds review", "token": actionsToken,
	}
	o := j.actionStep(a, inputs, killAt(fakegithub.KindPull))
	if !o.Killed {
		t.Fatalf("attempt 1 through the action not killed at the PR: exit %d\n%s", o.Exit, o.Stderr)
	}
	inputs["body"] = "Reworded on the re-run."
	o = j.actionStep(a, inputs, nil)
	out := j.checkFoundOnRerun(o, fmt.Sprintf("gha/agent/fix/#%d", n))

	prs := w.fake.PullRequests(owner, name)
	if len(prs) != 1 {
		t.Fatalf("%d PRs, want 1", len(prs))
	}
	pr := prs[0]
	if pr.Title != title {
		t.Fatalf("PR title %q, want the input verbatim %q", pr.Title, title)
	}
	if !strings.HasSuffix(pr.Body, "\n"+body) {
		t.Fatalf("PR body %q, want it to end with the input verbatim %q", pr.Body, body)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Fatal("an input was run as shell: the canary file exists")
	}
	for _, l := range []string{"bug", "agent", "needs review"} {
		if !slices.Contains(pr.Labels, l) {
			t.Fatalf("PR labels %v, want %q from the labels input", pr.Labels, l)
		}
	}
	if out["number"] != strconv.Itoa(pr.Number) || out["sha"] != "" {
		t.Fatalf("outputs %q, want number %d", out, pr.Number)
	}
}

// Each command input becomes the ghonce command line it documents, with
// every field passed as one argument, empty fields left out. A stub stands
// in for ghonce and records its argv. Every kind's command is run twice,
// from its declaration (actionKindCases), and its argv parsed back by the
// CLI's own field flags must give the kind's action; the rows after them
// are the inputs that are no kind's.
func TestActionStepCommandLines(t *testing.T) {
	t.Parallel()
	a := readAction(t)
	stepArgv := func(t *testing.T, inputs map[string]string) []string {
		w := newWorld(t)
		j := newJob(w, `{}`)
		argv := filepath.Join(w.dir, "argv")
		stub := filepath.Join(w.dir, "stub.sh")
		if err := os.WriteFile(stub, []byte("#!/bin/bash\nprintf '%s\\0' \"$@\" > "+argv+"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		o := j.actionStepWith(a, inputs, stub, nil)
		wantExit(t, o, 0, "the action's script with a stub ghonce")
		b, err := os.ReadFile(argv)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	}
	covered := map[string]bool{}
	for _, c := range actionKindCases(t) {
		covered[c.inputs["command"]] = true
		t.Run(c.name, func(t *testing.T) {
			got := stepArgv(t, c.inputs)
			if !slices.Equal(got[max(len(got)-len(c.tail), 0):], c.tail) {
				t.Fatalf("argv %q, want it to end with %q", got, c.tail)
			}
			spec, err := parseVerb(c.kind, got[:len(got)-len(c.tail)])
			if err != nil || !reflect.DeepEqual(spec, c.want) {
				t.Fatalf("argv %q parses (%v) to %+v, want %+v", got, err, spec, c.want)
			}
		})
	}
	arm := regexp.MustCompile(`(?m)^ +([a-z]+(?:-[a-z]+)+)\)$`)
	for _, st := range a.Runs.Steps {
		for _, m := range arm.FindAllStringSubmatch(st.Run, -1) {
			if !covered[m[1]] {
				t.Errorf("action.yml's command %s is no kind's, or no kind's example can be given through the Action's inputs", m[1])
			}
		}
	}
	for _, c := range []struct {
		inputs map[string]string
		want   []string
	}{
		{map[string]string{"command": "reconcile", "wait": "3m", "step": "s"}, []string{"reconcile", "--step", "s"}},
		{map[string]string{"command": "status", "stale": "30m", "trust-author": "x[bot]"}, []string{"status", "--stale", "30m", "--trust-author", "x[bot]"}},
	} {
		t.Run(c.inputs["command"], func(t *testing.T) {
			if got := stepArgv(t, c.inputs); !slices.Equal(got, c.want) {
				t.Fatalf("argv %q, want %q", got, c.want)
			}
		})
	}
	t.Run("unknown command", func(t *testing.T) {
		w := newWorld(t)
		o := newJob(w, `{}`).actionStepWith(a, map[string]string{"command": "pr-merge"}, "/bin/false", nil)
		wantExit(t, o, 2, "an unknown command")
		if !strings.Contains(o.Stdout, "::error title=ghonce::unknown command") {
			t.Fatalf("no ::error:: for an unknown command:\n%s", o.Stdout)
		}
	})
}

// actionKindCase is a kind's action given to the Action as inputs: the
// command line must end with tail (the inputs that are no field's) and
// parse back to want.
type actionKindCase struct {
	name, kind string
	inputs     map[string]string
	tail       []string
	want       any
}

// actionKindCases are, for each command of the Action (each kind's verb of
// two words on GitHub, Face.CLI), the kind's Example, with wait, step and
// trust-author, and then every field that has an input set at once. A text
// field with a -file input is read from it in the example where it is
// required, else in the second (where a required one is given empty). A kind whose example has a field the Action does not take
// (Field.Input "-": an inline comment's line) has no command of its own.
func actionKindCases(t *testing.T) []actionKindCase {
	dir := t.TempDir()
	var out []actionKindCase
	for _, kind := range kinds.All() {
		f, _ := kinds.FaceOf(kind)
		types := kinds.FieldTypes(kind)
		every := map[string]any{}
		for _, fl := range f.Fields {
			if fl.ActionInput() != "" {
				every[fl.Name] = sampleValue(fl, types[fl.Name])
			}
		}
		for _, verb := range f.CLI {
			if !kinds.OnGitHub(kind) || !strings.Contains(verb, " ") {
				continue
			}
			cmd := strings.ReplaceAll(verb, " ", "-")
			for i, b := range []string{f.Example, string(must(json.Marshal(every)))} {
				var vals map[string]any
				if err := json.Unmarshal([]byte(b), &vals); err != nil {
					t.Fatalf("%s: %v", kind, err)
				}
				inputs := map[string]string{"command": cmd}
				for name, v := range vals {
					fl, _ := f.Field(name)
					in, text := fl.ActionInput(), fmt.Sprint(v)
					switch items, list := v.([]any); {
					case in == "":
						t.Logf("%s: %s's example has %s, which the Action does not take: %s is not %s's", cmd, kind, name, cmd, kind)
						inputs = nil
					case reflect.TypeOf(v) == reflect.TypeFor[float64]():
						text = strconv.FormatFloat(v.(float64), 'f', -1, 64)
					case types[name] == reflect.TypeFor[[]byte]():
						text = string(must(base64.StdEncoding.DecodeString(text)))
					case list && reflect.TypeFor[string]() != types[name].Elem():
						text = string(must(json.Marshal(v)))
					case list:
						strs := make([]string, len(items))
						for k, it := range items {
							strs[k] = fmt.Sprint(it)
						}
						text = strings.Join(strs, "\n") // a line each: the CLI splits commas itself
					}
					for sw, val := range fl.Switches {
						if val == v {
							text = sw
						}
					}
					if inputs == nil {
						break
					}
					if strings.HasSuffix(in, "-file") || (fl.File && (i == 1) != fl.Required) {
						path := filepath.Join(dir, fmt.Sprintf("%s-%d-%s", cmd, i, name))
						if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
							t.Fatal(err)
						}
						in, text = strings.TrimSuffix(in, "-file")+"-file", path
					}
					inputs[in] = text
				}
				if inputs == nil {
					break
				}
				want, err := kinds.DecodeValue(kind, []byte(b))
				if err != nil {
					t.Fatalf("%s: %v", kind, err)
				}
				c := actionKindCase{name: fmt.Sprintf("%s/%s/%d", cmd, kind, i), kind: kind, inputs: inputs, want: want}
				if i == 0 {
					maps.Copy(inputs, map[string]string{"wait": "3m", "step": "open", "trust-author": "x[bot]\ny[bot]"})
					c.tail = []string{"--wait", "3m", "--step", "open", "--trust-author", "x[bot]", "--trust-author", "y[bot]"}
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// An App's installation token passed as the action's token is not taken for
// the job's GITHUB_TOKEN: github-actions[bot] is not assumed, and without
// --trust-author the step stops before it records or sends anything,
// rather than miss on a re-run what the first attempt made.
func TestActionStepDoesNotAssumeActionsBotForAnotherToken(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n := w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
	j := newJob(w, fmt.Sprintf(`{"issue":{"number":%d}}`, n))
	const appToken = otherAppToken
	w.fake.AddInstallationToken("other-app[bot]", appToken)
	a := readAction(t)
	writes := w.fake.Writes()
	o := j.actionStep(a, map[string]string{"command": "issue-comment", "number": strconv.Itoa(n), "body": "hi", "token": appToken}, nil)
	wantExit(t, o, 1, "an App's token as the action's token")
	if !strings.Contains(o.Stderr, "::error title=ghonce (exit 1)::") || !strings.Contains(o.Stderr, "set trust-author: ") || strings.Contains(o.Stderr, "--trust-author") || w.fake.Writes() != writes {
		t.Fatalf("want exit 1 asking for the input trust-author: (not the flag) and no write:\n%s", o.Stderr)
	}
	// With the App's login trusted, it works.
	o = j.actionStep(a, map[string]string{"command": "issue-comment", "number": strconv.Itoa(n), "body": "hi", "token": appToken, "trust-author": "other-app[bot]"}, nil)
	wantExit(t, o, 0, "with trust-author")
	if out := j.outputs(); out["outcome"] != "created" {
		t.Fatalf("outputs %q", out)
	}
}

// Advice that names a flag, as an Actions user sees it. Through the ghonce
// action's own step, a re-run with reworded text (a retry, attempt 2 of the
// run) gets a ::warning:: annotation that names the input on-change:, and
// another run of the workflow on the same issue with another title gets
// the facts, exit 7, in an ::error:: naming the input step:, no flag in
// either. A `run: ghonce ...` step in the same job types flags, so its
// warning, an annotation too, names --on-change.
func TestActionsAdviceNamesTheActionsInputs(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n := w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
	j := newJob(w, fmt.Sprintf(`{"issue":{"number":%d}}`, n))
	a := readAction(t)
	inputs := map[string]string{"command": "issue-create", "title": "Crash on start", "body": "First wording.", "token": actionsToken}
	wantExit(t, j.actionStep(a, inputs, nil), 0, "issue-create through the action")

	flag := regexp.MustCompile(`--(on-change|step)\b`)
	warning := regexp.MustCompile(`(?m)^::warning title=ghonce::(.*)$`)
	inputs["title"], inputs["body"] = "Crash on start (retry)", "Second wording."
	o := j.actionStep(a, inputs, nil)
	wantExit(t, o, 0, "a reworded re-run through the action")
	m := warning.FindStringSubmatch(o.Stderr)
	if m == nil || !strings.Contains(m[1], "on-change: update") || flag.MatchString(m[1]) {
		t.Fatalf("a reworded re-run through the action: want a ::warning:: naming the input on-change: and no flag; stderr:\n%s", o.Stderr)
	}
	if strings.Contains(o.Stderr, "ghonce: warning:") {
		t.Errorf("the warning is a plain line as well as an annotation:\n%s", o.Stderr)
	}

	other := newJob(w, fmt.Sprintf(`{"issue":{"number":%d}}`, n))
	other.runID = 4343
	inputs["title"], inputs["body"] = "Add a dark mode to the settings page", "Another act."
	o = other.actionStep(a, inputs, nil)
	wantExit(t, o, 7, "another run, another title, through the action")
	e := regexp.MustCompile(`(?m)^::error title=ghonce \(exit 7\)::(.*)$`).FindStringSubmatch(o.Stderr)
	if e == nil || !strings.Contains(e[1], "use step: issue-create-add-a-dark-mode-to-the-settings-page") || !strings.Contains(e[1], "nothing to do") || flag.MatchString(o.Stderr) {
		t.Fatalf("another title through the action: want an ::error:: with the facts naming the input step:, and no flag anywhere; stderr:\n%s", o.Stderr)
	}

	// A run: step calls the CLI with flags: its advice names them.
	o = j.run(nil, "issue", "create", "--title", "Crash on start, again", "--body", "Third wording.")
	wantExit(t, o, 0, "a reworded re-run in a run: step")
	if m := warning.FindStringSubmatch(o.Stderr); m == nil || !strings.Contains(m[1], "--on-change update") {
		t.Fatalf("a reworded re-run in a run: step: want a ::warning:: naming --on-change; stderr:\n%s", o.Stderr)
	}
}

// sampleValue is a value of field fl, of Go type t, that its input gives:
// a text field's required value empty.
func sampleValue(fl effect.Field, t reflect.Type) any {
	switch {
	case fl.Switches != nil:
		return fl.Switches[slices.Sorted(maps.Keys(fl.Switches))[0]]
	case t.Kind() == reflect.Bool:
		return true
	case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
		return 7
	case t == reflect.TypeFor[[]byte]():
		return []byte("v-" + fl.Name + "\n")
	case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String:
		return []string{"v " + fl.Name, "w"}
	case t.Kind() == reflect.Slice:
		return reflect.MakeSlice(t, 1, 1).Interface()
	case fl.File && fl.Required:
		return ""
	}
	return "v-" + fl.Name
}

// parseVerb is the kind's action that argv, a `ghonce VERB` command line
// without the flags that are no field's, gives: parsed by the verbs' own
// field flags (cmdutil.AddFieldFlags, GatherPayload).
func parseVerb(kind string, argv []string) (any, error) {
	f, _ := kinds.FaceOf(kind)
	if len(argv) < 2 || !slices.Contains(f.CLI, argv[0]+" "+argv[1]) {
		return nil, fmt.Errorf("not a verb of %s, %q", kind, f.CLI)
	}
	fs := pflag.NewFlagSet(argv[1], pflag.ContinueOnError)
	values, _ := cmdutil.AddFieldFlags(fs, kind, f.Fields, effect.Field.CLIFlag)
	if err := fs.Parse(argv[2:]); err != nil {
		return nil, err
	}
	if n := len(slices.DeleteFunc(slices.Clone(f.Fields), func(fl effect.Field) bool { return fl.Arg == "" })); fs.NArg() != n {
		return nil, fmt.Errorf("%d arguments, want %d", fs.NArg(), n)
	}
	sys := cmdutil.IO{In: strings.NewReader(""), Getenv: func(string) string { return "" }}
	payload, err := cmdutil.GatherPayload(fs.Changed, values, fs.Args(), sys, nil, true)
	if err != nil {
		return nil, err
	}
	return cmdutil.DecodePayload(kind, payload)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
