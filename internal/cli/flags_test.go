package cli

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/taskkey"
)

// A wrapper passes the shared flags to every call: a verb that does not
// read one runs, and says on stderr that the flag did nothing; one that
// reads it takes it, before the verb too; and the ignored flag still
// parses as it would where it is read.
func TestASharedFlagAVerbIgnoresWarns(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	keyLine := regexp.MustCompile(`^` + regexp.QuoteMeta(taskkey.Prefix) + `\w+\n$`)
	key := func(extra ...string) []string {
		return slices.Concat([]string{"key", "--task", "T", "--step", "s", "--kind", "exec"}, extra)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout *regexp.Regexp // nil: stdout must be empty
		warn   string         // the flag that must be reported ignored; "" for none
	}{
		{"key ignores --ledger", key("--ledger", "/nonexistent/ledger.db"), 0, keyLine, "--ledger has no effect on 'ghonce key'; ignored"},
		{"before the verb too", slices.Concat([]string{"--ledger", "/nonexistent/ledger.db"}, key()), 0, keyLine, "--ledger has no effect on 'ghonce key'"},
		{"version ignores --repo", []string{"version", "-R", testRepo}, 0, regexp.MustCompile(`^ghonce `), "--repo has no effect on 'ghonce version'"},
		{"a flag the verb reads says nothing", key("--repo", testRepo), 0, keyLine, ""},
		{"--json before the verb is the verb's", slices.Concat([]string{"--json"}, key()), 0, regexp.MustCompile(`^\{"ok":true,.*"key":"` + regexp.QuoteMeta(taskkey.Prefix)), ""},
		{"an ignored --ledger may not be empty", key("--ledger", ""), failure.ExitUsage, nil, ""},
		{"an ignored --wait must be a duration", key("--wait", "soon"), failure.ExitUsage, nil, ""},
		// demo prints no JSON: its failure is words on stderr, not an object.
		{"no JSON from a verb without --json", []string{"demo", "--json", "--crashes", "0"}, failure.ExitUsage, nil, "--json has no effect on 'ghonce demo'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := w.run("", nil, tc.args...)
			if o.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", o.code, tc.code, o.stderr)
			}
			switch {
			case tc.stdout == nil && o.stdout != "":
				t.Errorf("stdout %q, want nothing", o.stdout)
			case tc.stdout != nil && !tc.stdout.MatchString(o.stdout):
				t.Errorf("stdout %q, want %s", o.stdout, tc.stdout)
			}
			if tc.warn == "" && strings.Contains(o.stderr, "no effect") {
				t.Errorf("stderr %q warns, want no warning", o.stderr)
			}
			if !strings.Contains(o.stderr, tc.warn) {
				t.Errorf("stderr %q does not say %q", o.stderr, tc.warn)
			}
		})
	}
}

// Each verb's help lists the shared flags it reads, and none it ignores.
func TestHelpListsTheSharedFlagsAVerbReads(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	shared := []string{"--ledger", "--repo", "--task", "--step", "--json", "--wait", "--settle", "--trust-ledger", "--trust-author", "--app-id"}
	for _, tc := range []struct {
		verb  []string
		reads []string
	}{
		{[]string{"pr", "create"}, shared},
		{[]string{"exec"}, []string{"--ledger", "--repo", "--task", "--step", "--json", "--wait", "--settle"}},
		{[]string{"status"}, []string{"--ledger", "--repo", "--task", "--json"}},
		{[]string{"reconcile"}, []string{"--ledger", "--repo", "--task", "--json", "--settle", "--trust-author", "--app-id"}},
		{[]string{"mcp"}, []string{"--ledger", "--repo", "--task", "--wait", "--settle", "--trust-ledger", "--trust-author", "--app-id"}},
		{[]string{"labels", "prune"}, []string{"--ledger", "--repo", "--task", "--json", "--trust-author", "--app-id"}},
		{[]string{"version"}, []string{"--json"}},
		{[]string{"demo"}, nil},
	} {
		t.Run(strings.Join(tc.verb, " "), func(t *testing.T) {
			o := w.run("", nil, append(tc.verb, "--help")...)
			if o.code != 0 {
				t.Fatalf("exit %d: %s", o.code, o.stderr)
			}
			for _, fl := range shared {
				listed := regexp.MustCompile(`(?m)^\s+(-\w, )?` + fl + `\b`).MatchString(o.stdout)
				if reads := slices.Contains(tc.reads, fl); listed != reads {
					t.Errorf("help lists %s: %v, want %v\n%s", fl, listed, reads, o.stdout)
				}
			}
		})
	}
}

// With --json, a verb that takes it prints one failure object on stdout
// even when its flags fail to parse.
func TestJSONFailureFromAVerbThatTakesIt(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	o := w.run("", nil, "key", "--json", "--bogus")
	if o.code != failure.ExitUsage {
		t.Fatalf("exit %d, want %d; stderr: %s", o.code, failure.ExitUsage, o.stderr)
	}
	var f struct {
		OK    bool                  `json:"ok"`
		Error struct{ Kind string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &f); err != nil || f.OK || f.Error.Kind != "usage" {
		t.Fatalf("stdout %q (%v), want one usage failure", o.stdout, err)
	}
}

// ghonce key derives keys only for kinds the engine performs: a misspelt
// --kind would print a key no verb ever records, and a runner comparing it
// with the ledger would wrongly conclude the action never ran.
func TestKeyRefusesAnUnknownKind(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	o := w.run("", nil, "key", "--task", "T", "--step", "s", "--kind", "pull-request", "--repo", testRepo)
	if o.code != failure.ExitUsage || o.stdout != "" || !strings.Contains(o.stderr, `--kind "pull-request" is not a kind`) || !strings.Contains(o.stderr, "pr,") {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit 2 naming the kinds", o.code, o.stdout, o.stderr)
	}
}
