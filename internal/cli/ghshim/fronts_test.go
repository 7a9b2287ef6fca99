package ghshim

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/kinds"
)

// Every kind is guarded by the shim where its Face claims a gh command,
// and every command the shim guards is some kind's.
func TestEveryKindIsOnTheShimItClaims(t *testing.T) {
	claimedGh := map[string]bool{}
	for _, kind := range kinds.All() {
		f, _ := kinds.FaceOf(kind)
		for _, verb := range f.Gh {
			claimedGh[verb] = true
			// A verb whose hook guards only some command lines (an edit
			// that adds labels) is known to the shim by its spelling.
			if got, _, ok := guardedGh(strings.Fields(verb)); (!ok || got != verb) && (ghHooks[verb].guards == nil || ghVerbs[verb] != verb) {
				t.Errorf("%s claims `gh %s`, which the shim hands to the real gh", kind, verb)
			}
		}
	}
	for _, verb := range slices.Sorted(maps.Values(ghVerbs)) {
		if !claimedGh[verb] {
			t.Errorf("the shim guards `gh %s`, which no kind's Face claims", verb)
		}
	}
}
