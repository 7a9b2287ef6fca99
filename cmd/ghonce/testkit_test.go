package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The shipped binary links no test kit: not the harness that kills
// processes at a fake's commits, not the test worlds, the reliability
// program, the audit's test corpus or the report generators. `ghonce demo`
// plays its crash in front of the fake GitHub itself (internal/cli's
// crashFront). The fake, fixtures, is still linked for the demo, with its
// fault injection: separating the two is the next step.
func TestShippedBinaryLinksNoTestKit(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 {
		t.Fatalf("go list -deps named %d packages; this test would check nothing", len(deps))
	}
	for _, p := range deps {
		rel, ok := strings.CutPrefix(p, "github.com/ghonce/ghonce/")
		if !ok {
			continue
		}
		for _, kit := range []string{"internal/harness", "internal/testworld", "internal/reliability", "internal/audit/audittest",
			"internal/bench", "internal/benchreport", "internal/docgen", "internal/clidoc", "tools/"} {
			if rel == kit || strings.HasPrefix(rel, strings.TrimSuffix(kit, "/")+"/") {
				t.Errorf("./cmd/ghonce links %s, which is test kit", p)
			}
		}
	}
}
