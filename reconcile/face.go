package reconcile

import (
	"reflect"
	"slices"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/kinds"
)

// Face is what every front needs to know of a kind (effect.Face).
type Face = effect.Face

// The fields several kinds share, as every front spells them.
var (
	titleField  = effect.Field{Name: "title", Short: "t", Help: "title (required)", Required: true}
	bodyField   = effect.Field{Name: "body", Short: "b", Help: "body text", File: true, FileShort: "F", Required: true}
	labelsField = effect.Field{Name: "labels", Flag: "label", Short: "l", Input: "labels", Help: "add a label (repeatable)", List: true}
)

// Fields lists kind's fields by JSON name, each true when it holds a
// number; nil for a kind this build does not know.
func Fields(kind string) map[string]bool {
	k, ok := kinds.Lookup(kind)
	if !ok {
		return nil
	}
	t := reflect.TypeOf(k.New()).Elem()
	out := map[string]bool{}
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		switch t.Field(i).Type.Kind() {
		case reflect.Int, reflect.Int64:
			out[name] = true
		default:
			out[name] = false
		}
	}
	return out
}

// BodyFields are the body fields of kind's REST write the kind carries,
// by GitHub's names, sorted: what a front maps its own names from.
func BodyFields(kind string) []string {
	f, ok := kinds.FaceOf(kind)
	if !ok || f.Write == "" {
		return nil
	}
	skip := append(slices.Clone(f.Unwired), f.Params()...)
	for _, v := range f.Wire {
		if p, ok := effect.WireParam(v); ok {
			skip = append(skip, p)
		}
	}
	var out []string
	for name := range Fields(kind) {
		if !slices.Contains(skip, name) {
			out = append(out, name)
		}
	}
	for name := range f.Wire {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}
