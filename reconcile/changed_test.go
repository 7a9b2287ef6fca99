package reconcile_test

import (
	"strings"
	"testing"

	"github.com/ghonce/ghonce/reconcile"
)

// A changed description is said in the engine's terms, naming no flag; a
// front says it with its own (InFlags).
func TestChangedErrorNamesNoFlag(t *testing.T) {
	r := &reconcile.Result{Kind: "issue", Number: 2, Step: "issue-create"}
	for _, ce := range []*reconcile.ChangedError{
		{Key: "k", Changed: []string{"title"}, Result: r},
		{Key: "k", Changed: []string{"title"}, Result: r, Different: "other words", NewStep: "issue-create-x"},
	} {
		if msg := ce.Error(); strings.Contains(msg, "--") || !strings.Contains(msg, "on-change policy warn") {
			t.Errorf("%q: want the policy named, and no flag", msg)
		}
		if msg := ce.InFlags("another --step", "--step %s", "--on-change %s"); !strings.Contains(msg, "--on-change warn") || !strings.Contains(msg, "another --step") {
			t.Errorf("InFlags: %q; want the flags", msg)
		}
	}
}
