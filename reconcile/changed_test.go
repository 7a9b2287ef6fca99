package reconcile_test

import (
	"strings"
	"testing"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// A changed description is said with an Action's fields, naming no flag;
// a front says it with its own (In).
func TestChangedErrorNamesNoFlag(t *testing.T) {
	r := &outcome.Result{Kind: "issue", Number: 2, Step: "issue-create"}
	ce := &reconcile.ChangedError{Key: "k", Changed: []string{"title"}, Result: r}
	if msg := ce.Error(); strings.Contains(msg, "--") || !strings.Contains(msg, `OnChange "warn"`) || !strings.Contains(msg, "another Step") {
		t.Errorf("%q: want the fields OnChange and Step named, and no flag", msg)
	}
	if msg := ce.In(flags{}); !strings.Contains(msg, "--on-change warn") || !strings.Contains(msg, "another --step") {
		t.Errorf("In: %q; want the flags", msg)
	}
	so := &reconcile.SameOrAnotherError{Key: "k", Result: r, Field: "title", Existing: "Release 1.4.0", Text: "Release v1.4.0", NewStep: "issue-create-x"}
	if msg := so.Error(); strings.Contains(msg, "--") || !strings.Contains(msg, `use Step "issue-create-x"`) {
		t.Errorf("%q: want the field Step named, and no flag", msg)
	}
	if msg := so.In(flags{}); !strings.Contains(msg, "use --step issue-create-x") {
		t.Errorf("In: %q; want the flag", msg)
	}
}

// flags is a front's words: each option its flag.
type flags struct{}

func (flags) Name(o effect.Option) string  { return strings.TrimSpace("--" + o.Name + " " + o.Value) }
func (f flags) Set(o effect.Option) string { return "pass " + f.Name(o) }
