package offgithub

import "testing"

// Only a guarded command without --check (and a tool call, which nothing
// can look up) keeps its done record forced: a rerun cannot look it up.
func TestVerifiable(t *testing.T) {
	for _, tt := range []struct {
		name string
		spec Spec
		want bool
	}{
		{"exec with check", Exec{Argv: []string{"true"}, Check: "test -e done"}, true},
		{"exec without check", Exec{Argv: []string{"true"}}, false},
		{"exec by pointer", &Exec{Argv: []string{"true"}}, false},
		{"tool call", ToolCall{Tool: "t"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := !tt.spec.Unverifiable(); got != tt.want {
				t.Errorf("verifiable(%T %+v) = %v, want %v", tt.spec, tt.spec, got, tt.want)
			}
		})
	}
}
