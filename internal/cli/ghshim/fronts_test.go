package ghshim

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/internal/cli/cmdutil"
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

// Every field a kind's gh command takes as a flag (Field.GhFlag, its
// Short, its switches) is read into the field: `gh release create -d`
// is a draft, `gh pr review --approve` an approval.
func TestEveryGhFlagSetsItsField(t *testing.T) {
	sys := cmdutil.IO{Getenv: func(string) string { return "" }}
	for _, kind := range kinds.All() {
		f, _ := kinds.FaceOf(kind)
		for _, verb := range f.Gh {
			for _, fl := range f.Fields {
				name := fl.GhFlag()
				if name == "" && fl.Switches == nil {
					continue
				}
				typ := kinds.FieldTypes(kind)[fl.Name]
				var cases [][2]any // the flags, and the field's value
				for sw, v := range fl.Switches {
					cases = append(cases, [2]any{[]string{"--" + sw}, v})
				}
				for _, flag := range []string{"--" + name, "-" + fl.Short} {
					switch {
					case name == "" || flag == "-":
					case typ != nil && typ.Kind() == reflect.Bool:
						cases = append(cases, [2]any{[]string{flag}, true})
					case fl.List:
						cases = append(cases, [2]any{[]string{flag, "x,y", flag, "z"}, []string{"x", "y", "z"}})
					case typ != nil && typ.Kind() == reflect.Int:
						cases = append(cases, [2]any{[]string{flag, "7"}, 7})
					default:
						cases = append(cases, [2]any{[]string{flag, "x"}, "x"})
					}
				}
				for _, c := range cases {
					args := c[0].([]string)
					o, _, err := parseGh(verb, args)
					if err != nil {
						t.Errorf("gh %s %s: %v", verb, strings.Join(args, " "), err)
						continue
					}
					p, err := cmdutil.GatherPayload(o.set, o.fields, nil, sys, nil, false)
					if err != nil || !reflect.DeepEqual(p[fl.Name], c[1]) {
						t.Errorf("gh %s %s: %s is %#v (%v), want %#v", verb, strings.Join(args, " "), fl.Name, p[fl.Name], err, c[1])
					}
				}
			}
		}
	}
}
