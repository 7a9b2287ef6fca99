package reconcile

import "testing"

// Only a guarded command without --check keeps its done record forced: it
// is the one kind a rerun cannot look up.
func TestVerifiable(t *testing.T) {
	for _, tt := range []struct {
		name string
		spec Spec
		want bool
	}{
		{"pr", PR{Base: "main", Head: "h"}, true},
		{"issue", Issue{Title: "t"}, true},
		{"exec with check", Exec{Argv: []string{"true"}, Check: "test -e done"}, true},
		{"exec without check", Exec{Argv: []string{"true"}}, false},
		{"exec by pointer", &Exec{Argv: []string{"true"}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := verifiable(tt.spec); got != tt.want {
				t.Errorf("verifiable(%T %+v) = %v, want %v", tt.spec, tt.spec, got, tt.want)
			}
		})
	}
}
