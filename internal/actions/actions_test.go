package actions

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func runner(event string) map[string]string {
	return map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_WORKFLOW": "agent", "GITHUB_JOB": "fix",
		"GITHUB_RUN_ID": "9001", "GITHUB_RUN_ATTEMPT": "1", "GITHUB_EVENT_PATH": "/event.json",
		"GITHUB_EVENT_NAME": event,
	}
}

func readOnly(path, payload string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if p != path {
			return nil, os.ErrNotExist
		}
		return []byte(payload), nil
	}
}

func TestDetect(t *testing.T) {
	if _, ok := Detect(envOf(map[string]string{"GITHUB_ACTIONS": "false", "GITHUB_JOB": "x"})); ok {
		t.Fatal("GITHUB_ACTIONS=false detected as Actions")
	}
	if e, ok := Detect(envOf(map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_JOB": "build"})); !ok || e.Job != "build" {
		t.Fatalf("Detect = %+v, %v; want the job build", e, ok)
	}
}

func TestDefaultTask(t *testing.T) {
	for _, c := range []struct {
		name, event, payload, want, why string
	}{
		{"issue labeled", "issues", `{"action":"labeled","issue":{"number":42}}`, "gha/agent/fix/#42", "issue #42"},
		{"comment on an issue", "issue_comment", `{"issue":{"number":42},"comment":{"id":1}}`, "gha/agent/fix/#42", "issue #42"},
		{"comment on a PR", "issue_comment", `{"issue":{"number":7,"pull_request":{"url":"x"}}}`, "gha/agent/fix/#7", "pull request #7"},
		{"pull request", "pull_request", `{"number":7,"pull_request":{"number":7}}`, "gha/agent/fix/#7", "pull request #7"},
		{"schedule", "schedule", `{"schedule":"*/30 * * * *"}`, "gha/agent/fix/run-9001", "run id 9001"},
		{"push", "push", `{"ref":"refs/heads/main"}`, "gha/agent/fix/run-9001", "run id 9001"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := runner(c.event)
			got, why, err := DefaultTask(envOf(env), readOnly("/event.json", c.payload))
			if err != nil || got != c.want || !strings.Contains(why, c.why) {
				t.Fatalf("DefaultTask = %q (%s), %v; want %q (%s)", got, why, err, c.want, c.why)
			}
			// A re-run is another attempt of the same run: the same task.
			env["GITHUB_RUN_ATTEMPT"] = "3"
			if again, _, _ := DefaultTask(envOf(env), readOnly("/event.json", c.payload)); again != got {
				t.Fatalf("attempt 3: task %q, want %q as attempt 1", again, got)
			}
			// Another job of the same run is another task.
			env["GITHUB_JOB"] = "review"
			if other, _, _ := DefaultTask(envOf(env), readOnly("/event.json", c.payload)); other == got {
				t.Fatalf("another job got the same task %q", other)
			}
		})
	}
}

// DefaultTask says why it cannot derive a task; its caller says how to
// give one, in its own words (a flag, an input), so it names no flag.
func TestDefaultTaskRefusesWhatItCannotRead(t *testing.T) {
	env := runner("issues")
	if _, _, err := DefaultTask(envOf(env), func(string) ([]byte, error) { return nil, errors.New("permission denied") }); err == nil || !strings.Contains(err.Error(), "GITHUB_EVENT_PATH") || strings.Contains(err.Error(), "--") {
		t.Fatalf("unreadable payload: err %v, want the payload named and no flag", err)
	}
	if _, _, err := DefaultTask(envOf(env), readOnly("/event.json", "{not json")); err == nil {
		t.Fatal("malformed payload: no error")
	}
	delete(env, "GITHUB_RUN_ID")
	if _, _, err := DefaultTask(envOf(env), readOnly("/event.json", "{}")); err == nil {
		t.Fatal("no subject and no run id: no error")
	}
	if _, _, err := DefaultTask(envOf(map[string]string{}), nil); err == nil {
		t.Fatal("outside Actions: no error")
	}
}

func TestWriteOutputsRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "output")
	if err := os.WriteFile(path, []byte("earlier=step\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tricky := "line one\nkey=forged\nEOF\nghadelimiter_x\n"
	if err := WriteOutputs(path, map[string]string{"url": "https://x/pull/7", "body": tricky, "empty": ""}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadOutputs(path)
	if err != nil {
		t.Fatal(err)
	}
	if got["earlier"] != "step" || got["url"] != "https://x/pull/7" || got["body"] != tricky {
		t.Fatalf("outputs %q", got)
	}
	if _, ok := got["key"]; ok {
		t.Fatal("a value set another output")
	}
	if _, ok := got["empty"]; ok {
		t.Fatal("an empty value was written")
	}
	if err := WriteOutputs(path, map[string]string{"a\nb": "x"}); err == nil {
		t.Fatal("a name with a newline was accepted")
	}
}

func TestAnnotate(t *testing.T) {
	const tok = "ghs_abcdefghijklmnopqrstuvwxyz0123"
	// A stateless installation token (ghs_APPID_JWT, about 520 characters,
	// two dots) goes whole, not only up to its first dot.
	stateless := "ghs_31337_eyJhbGciOiJSUzI1NiJ9." + strings.Repeat("cGF5bG9hZA", 15) + "." + strings.Repeat("c2lnbmF0dXJl", 30)
	msg := "create pull request: 100% failed\nnext line ::error::forged token " + tok + " and postgres://ghonce:hunter2@db/x password=hunter2 " + stateless
	got := Annotate(1, msg, nil)
	if !strings.HasPrefix(got, "::error title=ghonce (exit 1)::") {
		t.Fatalf("Annotate(1) = %q", got)
	}
	for _, bad := range []string{"\n", tok, "hunter2", "cGF5bG9hZA", "c2lnbmF0dXJl"} {
		if strings.Contains(got, bad) {
			t.Fatalf("Annotate left %q in %q", bad, got)
		}
	}
	if !strings.Contains(got, "100% failed%0Anext line") {
		t.Fatalf("not escaped as the runner reads it: %q", got)
	}
	if w := Annotate(3, "could not confirm", nil); !strings.HasPrefix(w, "::warning ") || !strings.Contains(w, "Re-run") {
		t.Fatalf("Annotate(3) = %q", w)
	}
	if Annotate(0, "x", nil) != "" {
		t.Fatal("Annotate(0) is not empty")
	}
	pem := "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----"
	if s := Scrub("key: "+pem+" custom-secret", []string{"custom-secret"}); strings.Contains(s, "MIIEow") || strings.Contains(s, "custom-secret") {
		t.Fatalf("Scrub = %q", s)
	}
}

// A workflow command's text reads right both ways: decoded as the runner
// decodes it (actions/runner's ActionCommand.UnescapeData: %0D, %0A, then
// %25), it is the message; read as it is, by whatever reads ghonce's stderr
// other than the runner (an agent that called the gh shim), a percentage
// is a percentage, never "50%25".
func TestAnnotationsReadAsWritten(t *testing.T) {
	decode := strings.NewReplacer("%0D", "\r").Replace
	unescape := func(s string) string {
		s = decode(s)
		s = strings.ReplaceAll(s, "%0A", "\n")
		return strings.ReplaceAll(s, "%25", "%")
	}
	for _, msg := range []string{
		"the title shares 40% of its content words; a retry shares at least 50%.",
		"a literal %0A, %0d and %25 stay literal",
		"100%% and a trailing %",
		"two\nlines\r\n",
	} {
		got := Annotate(1, msg, nil)
		data := got[strings.Index(got, "::")+2:]
		data = data[strings.Index(data, "::")+2:]
		if strings.ContainsAny(data, "\r\n") || unescape(data) != msg {
			t.Errorf("Annotate(%q): the runner reads %q", msg, unescape(data))
		}
		if strings.Contains(msg, "50%.") && !strings.Contains(data, "at least 50%.") {
			t.Errorf("Annotate(%q) = %q: a percentage escaped where the runner needs no escape", msg, data)
		}
	}
	if got := escapeProperty("ghonce (exit 1): 50%, 0A"); got != "ghonce (exit 1)%3A 50%%2C 0A" {
		t.Errorf("escapeProperty = %q", got)
	}
}

func TestSummaryLine(t *testing.T) {
	r := Result{Kind: "pr", Key: "gk1_x", Task: "gha/a/b/#1", Step: "pr-create", Outcome: "found", Number: 7, URL: "https://x/pull/7", Unrecorded: true}
	line := r.SummaryLine()
	for _, want := range []string{"**found**", "[#7](https://x/pull/7)", "had no record of it", "gk1_x"} {
		if !strings.Contains(line, want) {
			t.Fatalf("summary %q lacks %q", line, want)
		}
	}
	if strings.Contains(line, "\n") {
		t.Fatalf("summary is not one line: %q", line)
	}
	r.Outcome = "skipped"
	if !strings.Contains(r.SummaryLine(), "already done") {
		t.Fatalf("skipped summary %q", r.SummaryLine())
	}
	if o := r.Outputs(); o["number"] != "7" || o["payload_changed"] != "false" || o["task"] != r.Task {
		t.Fatalf("outputs %v", o)
	}
}

func TestAssumeActionsBot(t *testing.T) {
	env := runner("issues")
	if !AssumeActionsBot(envOf(env), "ghs_any") {
		t.Fatal("a plain run: step (job token unknown) does not assume github-actions[bot]")
	}
	env[JobTokenEnv] = "ghs_job"
	if !AssumeActionsBot(envOf(env), "ghs_job") || AssumeActionsBot(envOf(env), "ghs_other_app") {
		t.Fatal("with the job token known, only it is taken for GITHUB_TOKEN")
	}
	if AssumeActionsBot(envOf(map[string]string{}), "ghs_job") {
		t.Fatal("assumed outside Actions")
	}
}

// A found artifact says its state, and the summary calls the run that made
// it a re-run only when GITHUB_RUN_ATTEMPT says this is one: another run
// for the same issue is not a re-run.
func TestSummaryStateAndRerunWords(t *testing.T) {
	r := Result{Kind: "pr", Key: "gk1_x", Task: "gha/a/b/#1", Step: "pr-create", Outcome: "found", Number: 3, URL: "https://x/pull/3", Unrecorded: true, ArtifactState: "closed", RunAttempt: 1}
	line := r.SummaryLine()
	if !strings.Contains(line, "[#3](https://x/pull/3) (closed)") || strings.Contains(line, "re-run") || !strings.Contains(line, "an earlier run of this task") {
		t.Errorf("first attempt's summary %q: want the state, no 're-run', an earlier run of this task", line)
	}
	r.RunAttempt = 3
	if line := r.SummaryLine(); !strings.Contains(line, "an earlier attempt of this run (this is attempt 3)") {
		t.Errorf("third attempt's summary %q: want it to say this is attempt 3", line)
	}
	if o := r.Outputs(); o["artifact_state"] != "closed" {
		t.Errorf("outputs %v: want artifact_state closed", o)
	}
	r.ArtifactState = ""
	if _, ok := r.Outputs()["artifact_state"]; ok && r.Outputs()["artifact_state"] != "" {
		t.Errorf("a skipped result sets artifact_state %q", r.Outputs()["artifact_state"])
	}
}
