package kinds_test

import (
	"strings"
	"testing"

	"github.com/ghonce/ghonce/kinds"
	_ "github.com/ghonce/ghonce/offgithub" // registers the kinds off GitHub
	"github.com/ghonce/ghonce/reconcile"
)

// The front ends ask what a kind needs instead of naming kinds.
func TestKindPredicates(t *testing.T) {
	t.Parallel()
	want := map[string][2]bool{ // OnGitHub, CarriesKeyLabel
		"branch": {true, false}, "comment": {true, false}, "exec": {false, false},
		"file": {true, false}, "issue": {true, true}, "pr": {true, true}, "review": {true, false},
		"tool-call": {false, false}, "close": {true, false}, "comment-delete": {true, false}, "branch-delete": {true, false},
		"release":        {true, false},
		"labels":         {true, false},
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

// Every kind's key of a target is its engine's: a description's key, and
// an unknown kind is an error naming the kinds.
func TestKeyOfTarget(t *testing.T) {
	t.Parallel()
	want, err := reconcile.KeyOf(reconcile.Action{Task: "T", Repo: "o/r", Spec: reconcile.Comment{Number: 7}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := kinds.KeyOfTarget("comment", "7", "T", "", "o/r"); err != nil || got != want {
		t.Errorf("KeyOfTarget(comment, 7) = %s, %v; want %s", got, err, want)
	}
	if _, err := kinds.KeyOfTarget("comment", "seven", "T", "", "o/r"); err == nil {
		t.Error("KeyOfTarget accepted a comment on issue \"seven\"")
	}
	if _, err := kinds.KeyOfTarget("gist", "x", "T", "s", "o/r"); err == nil || !strings.Contains(err.Error(), "pr") {
		t.Errorf("an unknown kind: %v, want an error naming the kinds", err)
	}
}
