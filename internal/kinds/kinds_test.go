package kinds_test

import (
	"testing"

	"github.com/ghonce/ghonce/internal/kinds"
	"github.com/ghonce/ghonce/reconcile"
)

// The front ends ask what a kind needs instead of naming kinds.
func TestKindPredicates(t *testing.T) {
	t.Parallel()
	want := map[string][2]bool{ // OnGitHub, CarriesKeyLabel
		"branch": {true, false}, "comment": {true, false}, "exec": {false, false},
		"file": {true, false}, "issue": {true, true}, "pr": {true, true},
		"tool-call": {false, false}, "close": {true, false}, "comment-delete": {true, false}, "branch-delete": {true, false},
		"review-comment": {true, false},
	}
	all := kinds.All()
	if len(all) != len(want) {
		t.Fatalf("All() = %v, want the %d of this table", all, len(want))
	}
	for _, k := range all {
		w, ok := want[k]
		if !ok {
			t.Fatalf("kind %q is not in this table", k)
		}
		if _, ok := kinds.FaceOf(k); !ok {
			t.Errorf("%s: no Face", k)
		}
		if got := [2]bool{kinds.OnGitHub(k), reconcile.CarriesKeyLabel(k)}; got != w {
			t.Errorf("%s: OnGitHub, CarriesKeyLabel = %v, want %v", k, got, w)
		}
	}
	if !kinds.OnGitHub("from-a-newer-ghonce") || reconcile.CarriesKeyLabel("from-a-newer-ghonce") {
		t.Error("an unknown kind must count as a GitHub kind (ask for a token) that carries no label")
	}
}
