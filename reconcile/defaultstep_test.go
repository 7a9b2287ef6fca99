package reconcile_test

import (
	"testing"

	"github.com/ghonce/ghonce/reconcile"
)

// An action that names no step takes its kind's default, in Prepare and
// KeyOf alike: every kind's example (a kind without a default, a guarded
// command, needs its step).
func TestEmptyStepIsTheKindsDefault(t *testing.T) {
	for kind, spec := range examples(t) {
		ds, ok := spec.(reconcile.DefaultStepper)
		if !ok {
			continue
		}
		step := ds.DefaultStep()
		a := reconcile.Action{Task: "T", Repo: "o/r", Spec: spec}
		p, err := reconcile.Prepare(a)
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		named := a
		named.Step = step
		want, _ := reconcile.Prepare(named)
		k, err := reconcile.KeyOf(a)
		if step == "" || p.Action().Step != step || p.Key() != want.Key() || err != nil || k != p.Key() {
			t.Errorf("%s: step %q key %s, KeyOf %s (%v); want %q and the key of that step", kind, p.Action().Step, p.Key(), k, err, step)
		}
	}
}
