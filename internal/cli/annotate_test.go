package cli

import (
	"regexp"
	"strings"
	"testing"
)

// The same-act refusal says a percentage ("a retry shares at least 50%"):
// inside Actions its ::error:: line carries it as written, which both the
// runner (decoding %0D, %0A and %25) and whoever reads the raw line (an
// agent that called the gh shim) read as the message on the plain line.
func TestSameActRefusalsPercentInActions(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	env := map[string]string{"GITHUB_ACTIONS": "true"}
	if r := w.run("", env, "issue", "create", "--task", "P", "--title", "Crash on start", "--body", "b", "--repo", testRepo); r.code != 0 {
		t.Fatalf("first issue: exit %d\n%s", r.code, r.stderr)
	}
	r := w.run("", env, "issue", "create", "--task", "P", "--title", "Add a dark mode to the settings page", "--body", "b", "--repo", testRepo)
	plain := regexp.MustCompile(`(?m)^ghonce: (.*%.*)$`).FindStringSubmatch(r.stderr)
	annotation := regexp.MustCompile(`(?m)^::error title=[^:]*::(.*)$`).FindStringSubmatch(r.stderr)
	if r.code != 1 || plain == nil || annotation == nil {
		t.Fatalf("another act in Actions: exit %d, want 1 with a percentage on a plain line and an ::error:: line:\n%s", r.code, r.stderr)
	}
	runner := strings.NewReplacer("%0D", "\r", "%0A", "\n").Replace
	if strings.Contains(annotation[1], "%25") || strings.ReplaceAll(runner(annotation[1]), "%25", "%") != plain[1] {
		t.Fatalf("the ::error:: line reads otherwise than the message:\n%s\n%s", annotation[1], plain[1])
	}
}
