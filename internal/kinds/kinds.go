// Package kinds is the one list of every kind, those on GitHub (package
// reconcile) and those off it (package offgithub), for a front that asks
// about a kind by its name: whether it acts on GitHub, its Face, the key
// of an action of it on a target. It sits above both engines, neither of
// which knows the other's kinds.
package kinds

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/reconcile"
)

// All names every kind, sorted.
func All() []string {
	out := append(reconcile.Kinds(), offgithub.Kinds()...)
	slices.Sort(out)
	return out
}

// OnGitHub reports whether kind acts on GitHub (every kind but a guarded
// command and a tool call): its actions need a repository, and settling
// its entries needs a GitHub client. A kind this build does not know (an
// entry written by a newer ghonce) counts as one: asking for a token is
// the safe side.
func OnGitHub(kind string) bool { return !offgithub.IsKind(kind) }

// FaceOf returns kind's Face; false for a kind this build does not know.
func FaceOf(kind string) (effect.Face, bool) {
	if f, ok := offgithub.FaceOf(kind); ok {
		return f, true
	}
	return reconcile.FaceOf(kind)
}

// KeyOfTarget is the key of an action of kind on target, for a caller that
// has the target and not the description (`ghonce key`): see
// reconcile.KeyOfTarget. a.Spec is not read. Its error is an
// *effect.InvalidError.
func KeyOfTarget(kind, target string, a reconcile.Action) (string, error) {
	if offgithub.IsKind(kind) {
		return offgithub.KeyOfTarget(kind, target, offgithub.Action{Task: a.Task, Step: a.Step, Repo: a.Repo})
	}
	if _, ok := reconcile.FaceOf(kind); !ok {
		return "", &effect.InvalidError{Field: "kind", Problem: fmt.Sprintf("%q is not a kind", kind), Want: "one of " + strings.Join(All(), ", ")}
	}
	return reconcile.KeyOfTarget(kind, target, a)
}

// Decode is the description of kind, a kind on GitHub, that payload (its
// fields by JSON name) gives, as a value: what a front builds from the
// values a user gave it.
func Decode(kind string, payload []byte) (reconcile.Spec, error) {
	s, err := reconcile.DecodeSpec(kind, payload)
	if v := reflect.ValueOf(s); err == nil && v.Kind() == reflect.Pointer {
		s = v.Elem().Interface().(reconcile.Spec)
	}
	return s, err
}

// FieldTypes are the Go types of kind's fields, by JSON name: what a
// front parses a value given as text into (a number, a switch, a list).
func FieldTypes(kind string) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	s, err := Decode(kind, []byte("{}"))
	if err != nil {
		return out
	}
	for f := range reflect.TypeOf(s).Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			out[name] = f.Type
		}
	}
	return out
}
