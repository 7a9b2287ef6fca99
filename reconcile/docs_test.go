package reconcile_test

import (
	"os"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/reconcile"
)

// docs/design/takeover.md and limits.md state the default in-flight
// window: it must be the one the engine uses.
func TestTakeoverDocStatesTheDefaultSettle(t *testing.T) {
	for _, doc := range []string{"takeover.md", "limits.md"} {
		b, err := os.ReadFile("../docs/design/" + doc)
		if err != nil {
			t.Fatal(err)
		}
		want := "(`reconcile.DefaultSettle`, " + reconcile.DefaultSettle.String() + ")"
		if !strings.Contains(string(b), want) {
			t.Errorf("docs/design/%s does not say %q", doc, want)
		}
	}
}
