package actions

import (
	"regexp"
	"strings"
	"testing"
)

// The CLI's advice that names a flag with an input of the same meaning, as
// the ghonce action's user reads it: the input, never the flag; outside
// the action (a run: step types flags), as it is.
func TestAdviceNamesTheInputs(t *testing.T) {
	via := func(k string) string {
		return map[string]string{"GITHUB_ACTIONS": "true", ViaActionEnv: "true"}[k]
	}
	runStep := func(k string) string { return map[string]string{"GITHUB_ACTIONS": "true"}[k] }
	flag := regexp.MustCompile(`--[a-z]`)
	for _, c := range []struct{ msg, want string }{
		{"this run's title differs from what made issue #2, which was left as it is (--on-change update edits it, --on-change fail stops)", "(on-change: update edits it, on-change: fail stops)"},
		{"use another --step for a new issue (e.g. --step issue-create-x), or --on-change warn to accept the first one", "use another step: for a new issue (e.g. step: issue-create-x), or on-change: warn to accept the first one"},
		{"no body: pass --body TEXT or --body-file FILE", "set body: or body-file:"},
		{"; if that is your bot or app, start ghonce with --trust-author x[bot]", "set trust-author: x[bot]"},
		{"GitHub answered 403 to GET /user: start ghonce with --trust-author LOGIN, the login that authors its artifacts (e.g. github-actions[bot])", "set trust-author: LOGIN, the login"},
		{"no task: pass --task ID or set GHONCE_TASK (an id that names the work)", "set task:"},
		{"in progress elsewhere: k is held by process 1 on h (waited 30s); rerun later", "rerun later"},
		{"ledger entries have been attempting longer than --stale: a person is needed", "longer than stale:"},
		{"GitHub App 7 has no private key: pass --app-private-key-file FILE or set GHONCE_APP_PRIVATE_KEY to the PEM text", "set github-app-private-key:"},
	} {
		got := Advice(via, c.msg)
		if !strings.Contains(got, c.want) || flag.MatchString(got) {
			t.Errorf("through the action:\n %s\nbecame\n %s\nwant it to say %q and name no flag", c.msg, got, c.want)
		}
		if got := Advice(runStep, c.msg); got != c.msg {
			t.Errorf("in a run: step, %q became %q, want it as it is", c.msg, got)
		}
	}
	// A command a person runs elsewhere keeps its flags.
	msg := "run `ghonce status`, then `ghonce resolve KEY --done` or `--retry`"
	if got := Advice(via, msg); got != msg {
		t.Errorf("%q became %q", msg, got)
	}
}

func TestWarnIsAnAnnotation(t *testing.T) {
	got := Warn("left as it is: 100% ghp_0123456789abcdefghij0123\nsecond line", nil)
	if got != "::warning title=ghonce::left as it is: 100%25 [REDACTED]%0Asecond line" {
		t.Fatalf("Warn = %q", got)
	}
}
