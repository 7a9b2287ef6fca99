package reconcile_test

import (
	"os"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/reconcile"
)

// docs/design/takeover.md states the default in-flight window: it must be the
// one the engine uses.
func TestTakeoverDocStatesTheDefaultSettle(t *testing.T) {
	b, err := os.ReadFile("../docs/design/takeover.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "(`reconcile.DefaultSettle`, " + reconcile.DefaultSettle.String() + ")"
	if !strings.Contains(string(b), want) {
		t.Errorf("docs/design/takeover.md does not say %q", want)
	}
}
