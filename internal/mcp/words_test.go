package mcp_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// cliFlag is a CLI flag in a text meant for a model.
var cliFlag = regexp.MustCompile(`(^|[^-\w])--[a-z][a-z-]*`)

// The texts a model reads name the tools' arguments, never CLI flags it
// cannot pass; a server flag is addressed to whoever runs the server.
func TestModelTextsNameNoCLIFlags(t *testing.T) {
	w := newWorld(t, opts{wait: -1})
	noFlags := func(what, text string) {
		t.Helper()
		clean := strings.ReplaceAll(text, "start ghonce with --trust-author", "")
		if m := cliFlag.FindString(clean); m != "" {
			t.Errorf("%s names the CLI flag %q: %s", what, strings.TrimSpace(m), text)
		}
	}
	noFlags("empty title", w.fails("create_issue", args("title", ""), "invalid arguments", "title is empty"))
	noFlags("empty base", w.fails("create_pull_request", args("title", "T", "head", "feature", "base", ""), "invalid arguments"))
	noFlags("no such repository", w.fails("create_issue", map[string]any{"owner": owner, "repo": "no-such-repo", "title": "T"}, "does not exist", "repository's name"))
	noFlags("head not pushed", w.fails("create_pull_request", args("title", "T", "head", "not-pushed", "base", "main")))
	// Bad input names the tool's argument that carries the field.
	noFlags("from_branch with a space", w.fails("create_branch", args("branch", "x", "from_branch", "a b"), "invalid arguments", `from_branch "a b" holds white space`))
	noFlags("step with a newline", w.fails("create_issue", args("title", "T", "step", "a\nb"), "invalid arguments", `step "a\nb" holds a control character`))
	noFlags("from_branch missing", w.fails("create_branch", args("branch", "x", "from_branch", "no-such-branch")))
	// A reworded retry after a restart: the warning advises a new step.
	w.ok("create_issue", args("title", "Flaky test in auth", "step", "words"))
	w.reconnect()
	out, text := w.ok("create_issue", args("title", "Flaky test in auth (retry)", "step", "words"))
	if !out.PayloadChanged {
		t.Fatalf("the second call's title differs, but payload_changed is false: %+v", out)
	}
	noFlags("the changed call's text", text)
	noFlags("the changed call's warning", out.Warning)
	// Another text under a done key: the facts name no CLI flag.
	w.ok("create_issue", args("title", "Flaky test in payments"))
	noFlags("another text", w.fails("create_issue", args("title", "Docs typo in README"), "do not call again"))
	// A server whose policy is fail: a reworded call names the argument
	// step and the server's setting, neither a flag nor a Go field.
	w = newWorld(t, opts{wait: -1, onChange: reconcile.OnChangeFail})
	w.ok("create_issue", args("title", "Flaky test in auth", "step", "words"))
	failed := w.fails("create_issue", args("title", "Flaky test in auth (retry)", "step", "words"), "another step for a new issue", "the server's on-change update")
	noFlags("a reworded call under on-change fail", failed)
	if strings.Contains(failed, "OnChange") {
		t.Errorf("a reworded call under on-change fail names a Go field: %s", failed)
	}
}

// An argument that does not fit the tool's schema (a wrong type, a missing
// or unknown property) is refused before the engine sees the call; its
// error still says "invalid arguments" and ends with the documented line:
// kind, the CLI's exit code, and the key the arguments name.
func TestSchemaErrorsEndWithKindAndKey(t *testing.T) {
	for _, tc := range []struct {
		tool string
		args map[string]any
		key  bool
	}{
		{"create_issue", args("title", 5), true},
		{"create_issue", map[string]any{"owner": owner, "repo": name}, true},
		{"create_issue", args("title", "T", "bogus", 1), false},
		{"add_issue_comment", args("issue_number", "seven", "body", "x"), false},
		{"create_or_update_file", args("path", "a.md", "branch", "main", "content", 5, "message", "m"), true},
	} {
		t.Run(fmt.Sprintf("%s %v", tc.tool, tc.args), func(t *testing.T) {
			w := newWorld(t, opts{})
			msg := w.fails(tc.tool, tc.args, "invalid arguments", "\n[usage: the CLI's exit 2")
			if has := strings.Contains(msg, ", key gk1_"); has != tc.key {
				t.Errorf("%s %v: %q; want the key named: %v", tc.tool, tc.args, msg, tc.key)
			}
		})
	}
}

// A found issue that is closed says so, in the text and in artifact_state.
func TestFoundArtifactSaysItsState(t *testing.T) {
	w := newWorld(t, opts{})
	key := taskkey.Key(taskkey.Identity{Task: task, Step: "issue-create", Kind: "issue", Repo: repo})
	n := w.fake.SeedIssue(owner, name, login, fixtures.SeedIssue{Title: "Old", Body: taskkey.WithMarker(key, "b"), Labels: []string{taskkey.Label(key)}, State: "closed"})
	out, text := w.ok("create_issue", args("title", "Old", "body", "b"))
	if out.Outcome != "found" || out.ArtifactState != "closed" || !strings.Contains(text, fmt.Sprintf("issue #%d (closed)", n)) {
		t.Errorf("a closed issue of ours: %+v %q; want found, artifact_state closed, and the words", out, text)
	}
}
