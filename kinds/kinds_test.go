package kinds_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/kinds"
	_ "github.com/ghonce/ghonce/offgithub" // registers the kinds off GitHub
	"github.com/ghonce/ghonce/reconcile"
)

// released are the kinds' names as shipped. A kind's name is part of
// every key of it, so a renamed kind would make every done action of it
// again: this is the one hand-written list of kinds among the tests (the
// others read the registry), and a kind joins it once released.
var released = []string{"branch", "branch-delete", "close", "comment", "comment-delete", "exec", "file",
	"issue", "labels", "pr", "release", "review", "review-comment", "tool-call"}

func TestNoKindIsRenamed(t *testing.T) {
	t.Parallel()
	for _, name := range released {
		if _, ok := kinds.Lookup(name); !ok {
			t.Errorf("kind %q is gone: its keys would no longer be found", name)
		}
	}
}

// Every kind has what the fronts ask of it: the name it registered under,
// and, when a front carries it, an example of its fields only, which is
// valid, round-trips through its payload, and (on GitHub) a default step.
func TestEveryKindHasWhatTheFrontsAsk(t *testing.T) {
	t.Parallel()
	for _, name := range kinds.All() {
		k, _ := kinds.Lookup(name)
		spec := k.New().(interface {
			Kind() string
			Target() string
			Validate(key string) error
		})
		if spec.Kind() != name {
			t.Errorf("%s: registered under the name of %q", spec.Kind(), name)
		}
		if f := k.Face; len(f.CLI)+len(f.Gh)+len(f.MCP) == 0 || f.Example == "" {
			if f.Example == "" && len(f.CLI)+len(f.Gh)+len(f.MCP) > 0 {
				t.Errorf("%s: its fronts carry it, and its Face has no Example", name)
			}
			continue
		}
		dec := json.NewDecoder(strings.NewReader(k.Face.Example))
		dec.DisallowUnknownFields()
		if err := dec.Decode(spec); err != nil {
			t.Errorf("%s: its example %s is not its fields: %v", name, k.Face.Example, err)
			continue
		}
		b, _ := json.Marshal(spec)
		if again, err := kinds.Decode(name, b); err != nil || !reflect.DeepEqual(again, spec) {
			t.Errorf("%s: its example %s is stored as %s, which decodes as %+v (%v)", name, k.Face.Example, b, again, err)
		}
		key, err := kinds.KeyOfTarget(name, spec.Target(), "T-1", "s", "o/r")
		if err == nil {
			err = spec.Validate(key)
		}
		if err != nil {
			t.Errorf("%s: its example %s is refused: %v", name, k.Face.Example, err)
		}
		if ds, ok := spec.(reconcile.DefaultStepper); k.OnGitHub && (!ok || ds.DefaultStep() == "") {
			t.Errorf("%s: a front carries it and it has no default step", name)
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
