package offgithub_test

import (
	"errors"
	"testing"

	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/reconcile"
)

// The keys of commands and tool calls are the ones ghonce derived when
// these kinds were reconcile's: ledgers written then keep working.
func TestKeysAreTheOnesRecordedBefore(t *testing.T) {
	args := offgithub.ArgsHash([]byte(`{"a":1}`))
	for _, tc := range []struct {
		a    offgithub.Action
		want string
	}{
		{offgithub.Action{Task: "weekly-report", Step: "notify", Spec: offgithub.Exec{Argv: []string{"true"}}}, "gk1_4tgiqut7cgm4xoc7vled42a7welu5g66"},
		{offgithub.Action{Task: "T-1", Step: "notify", Repo: "octo-org/hello-world", Spec: offgithub.Exec{Argv: []string{"true"}, Tgt: "alice@example.com"}}, "gk1_ms3wjp6olcyqa37bmu5gufehnmvqyoey"},
		{offgithub.Action{Task: "T-1", Step: "create_gist", Spec: offgithub.ToolCall{Tool: "create_gist", ArgsSHA256: args}}, "gk1_t4qo2eakkygzthsyg6lrqo7e62et5zrv"},
	} {
		if got := keyOf(t, tc.a); got != tc.want {
			t.Errorf("%s %s/%s: key %s, want %s", tc.a.Spec.Kind(), tc.a.Task, tc.a.Step, got, tc.want)
		}
	}
	for _, tc := range []struct{ kind, target, step, want string }{
		{"tool-call", args, "create_gist", "gk1_t4qo2eakkygzthsyg6lrqo7e62et5zrv"},
		{"exec", "x", "s", "gk1_gumpgvtr7t4ekc3q465i4aku5yoflr5o"},
	} {
		if got, err := kinds.KeyOfTarget(tc.kind, tc.target, "T-1", tc.step, ""); err != nil || got != tc.want {
			t.Errorf("KeyOfTarget(%s, %s) = %s, %v; want %s", tc.kind, tc.target, got, err, tc.want)
		}
	}
}

// A command has no default step: it must be named. It needs no
// repository.
func TestPrepareAGuardedCommand(t *testing.T) {
	var inv *reconcile.InvalidError
	if _, err := offgithub.Prepare(offgithub.Action{Task: "T", Spec: offgithub.Exec{Argv: []string{"true"}}}); !errors.As(err, &inv) {
		t.Errorf("exec without a step: %v, want an InvalidError", err)
	}
	a := offgithub.Action{Task: "T", Step: "s", Spec: offgithub.Exec{Argv: []string{"true"}}}
	p, err := offgithub.Prepare(a)
	if err != nil {
		t.Fatalf("a guarded command without a repository: %v", err)
	}
	if k, err := kinds.KeyOfTarget("exec", "", a.Task, a.Step, a.Repo); err != nil || k != p.Key() {
		t.Fatalf("KeyOfTarget = %q, %v; want Prepare's key %q", k, err, p.Key())
	}
}
