package audit

import (
	"maps"
	"slices"
	"testing"
)

// Every kind the audit accepts declares, in words the audit knows, what
// it needs: a new kind is checked here from its Face, not listed.
func TestEveryKindsAuditIsWhole(t *testing.T) {
	known := slices.Collect(maps.Keys(sameParts))
	if len(AllKinds) == 0 || !slices.Contains(AllKinds, "issue") {
		t.Fatalf("AllKinds = %v: the kinds' Faces declare no audit", AllKinds)
	}
	for _, k := range AllKinds {
		a := Rule(k)
		if a.Ref == "" {
			t.Errorf("%s: no Ref: a report cannot name its artifacts", k)
		}
		if a.Listing == "" {
			continue
		}
		if a.Detail == "" || len(a.Same) == 0 || slices.ContainsFunc(a.Same, func(p string) bool { return !slices.Contains(known, p) }) {
			t.Errorf("%s: Same %q (%q): want some of %q (sameParts), said in Detail", k, a.Same, a.Detail, known)
		}
		if !slices.Contains([]string{"", "close", "close-pr", "delete"}, a.Settle) || a.Settle == "" && a.Leave == "" {
			t.Errorf("%s: Settle %q, Leave %q: want close, close-pr or delete, or why --apply leaves a duplicate", k, a.Settle, a.Leave)
		}
	}
}
