package cli

import (
	"regexp"
	"strings"
	"testing"
)

// A message with a percentage in it (the same-act answer quotes both
// titles, "Coverage at 50%"): inside Actions its ::error:: line carries it
// as written, which both the runner (decoding %0D, %0A and %25) and
// whoever reads the raw line (an agent that called the gh shim) read as
// the message on the plain line.
func TestSameActRefusalsPercentInActions(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	env := map[string]string{"GITHUB_ACTIONS": "true"}
	if r := w.run("", env, "issue", "create", "--task", "P", "--title", "Coverage at 50%", "--body", "b", "--repo", testRepo); r.code != 0 {
		t.Fatalf("first issue: exit %d\n%s", r.code, r.stderr)
	}
	r := w.run("", env, "issue", "create", "--task", "P", "--title", "Coverage at 60%", "--body", "b", "--repo", testRepo)
	plain := regexp.MustCompile(`(?m)^ghonce: (.*%.*)$`).FindStringSubmatch(r.stderr)
	annotation := regexp.MustCompile(`(?m)^::error title=[^:]*::(.*)$`).FindStringSubmatch(r.stderr)
	if r.code != 7 || plain == nil || annotation == nil {
		t.Fatalf("another title in Actions: exit %d, want 7 (the facts) with a percentage on a plain line and an ::error:: line:\n%s", r.code, r.stderr)
	}
	runner := strings.NewReplacer("%0D", "\r", "%0A", "\n").Replace
	if strings.Contains(annotation[1], "%25") || strings.ReplaceAll(runner(annotation[1]), "%25", "%") != plain[1] {
		t.Fatalf("the ::error:: line reads otherwise than the message:\n%s\n%s", annotation[1], plain[1])
	}
}
