package reconcile

import "testing"

// Only a guarded command without --check keeps its done record forced: it
// is the one kind a rerun cannot look up.
func TestVerifiable(t *testing.T) {
	for _, tt := range []struct {
		spec Spec
		want bool
	}{
		{PR{Base: "main", Head: "h"}, true},
		{Issue{Title: "t"}, true},
		{Exec{Argv: []string{"true"}, Check: "test -e done"}, true},
		{Exec{Argv: []string{"true"}}, false},
		{&Exec{Argv: []string{"true"}}, false},
	} {
		if got := verifiable(tt.spec); got != tt.want {
			t.Errorf("verifiable(%T %+v) = %v, want %v", tt.spec, tt.spec, got, tt.want)
		}
	}
}
