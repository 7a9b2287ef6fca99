package reconcile

import (
	"testing"
)

// An action that names no step takes its kind's default, in Prepare and
// KeyOf alike; a kind without one (a guarded command) needs its step.
func TestEmptyStepIsTheKindsDefault(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		step string
	}{
		{PR{Base: "main", Head: "fix", Title: "t"}, "pr-create"},
		{Issue{Title: "t"}, "issue-create"},
		{Comment{Number: 1, Body: "b"}, "issue-comment"},
		{Branch{Name: "b", SHA: "0123456789abcdef0123456789abcdef01234567"}, "branch-create"},
		{File{Branch: "main", Path: "a.md", Message: "m"}, "file-put"},
		{ReviewComment{Number: 1, Path: "a.go", Line: 3, Body: "b"}, "review-comment"},
	} {
		a := Action{Task: "T", Repo: "o/r", Spec: tc.spec}
		p, err := Prepare(a)
		if err != nil {
			t.Fatalf("%s: %v", tc.spec.Kind(), err)
		}
		named := a
		named.Step = tc.step
		want, _ := Prepare(named)
		k, err := KeyOf(a)
		if p.Action().Step != tc.step || p.Key() != want.Key() || err != nil || k != p.Key() {
			t.Errorf("%s: step %q key %s, KeyOf %s (%v); want %q and the key of that step", tc.spec.Kind(), p.Action().Step, p.Key(), k, err, tc.step)
		}
	}
}
