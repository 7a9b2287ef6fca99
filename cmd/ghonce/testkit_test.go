package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The shipped binary links no test kit: not the fake GitHub's faults,
// latency and kill hooks (package fixtures; `ghonce demo` runs on the fake
// alone, internal/fakegithub, which holds GitHub's semantics and nothing
// else), not the harness that kills processes at a fake's commits, the test
// worlds, the reliability program, the audit's test corpus or the report
// generators, nor the standard library's (testing, net/http/httptest: the
// fake serves with net/http). `ghonce demo` plays its crash in front of the
// fake itself (internal/cli/democmd's crashFront).
func TestShippedBinaryLinksNoTestKit(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 20 || !slices.Contains(deps, "github.com/ghonce/ghonce/internal/fakegithub") {
		t.Fatalf("go list -deps named %d packages, without the demo's fake; this test would check nothing", len(deps))
	}
	for _, p := range deps {
		if p == "testing" || p == "net/http/httptest" {
			t.Errorf("./cmd/ghonce links %s, the standard library's test kit", p)
		}
		rel, ok := strings.CutPrefix(p, "github.com/ghonce/ghonce/")
		if !ok {
			continue
		}
		if isTestKit(rel) {
			t.Errorf("./cmd/ghonce links %s, which is test kit", p)
		}
	}
}

// isTestKit reports whether the module's package at rel is test kit:
// fixtures, anything under tests/ (the laboratory) or tools/ (generators),
// or any whose path has "test" in it.
func isTestKit(rel string) bool {
	for _, kit := range []string{"fixtures", "tests", "tools"} {
		if rel == kit || strings.HasPrefix(rel, kit+"/") {
			return true
		}
	}
	return strings.Contains(rel, "test")
}

// isTestKit knows the test kit the shipped binary once linked, so the test
// above cannot pass by naming nothing.
func TestIsTestKit(t *testing.T) {
	t.Parallel()
	for _, rel := range []string{"fixtures", "tests/harness", "tests/testworld", "tests/audittest", "tests/reliability", "tests/bench", "tools/clidoc", "tools/docgen", "tools/benchreport", "tools/lintproject"} {
		if !isTestKit(rel) {
			t.Errorf("isTestKit(%q) = false, want true", rel)
		}
	}
	for _, rel := range []string{"internal/fakegithub", "internal/cli", "reconcile", "ledger/sqlite"} {
		if isTestKit(rel) {
			t.Errorf("isTestKit(%q) = true, want false", rel)
		}
	}
}
