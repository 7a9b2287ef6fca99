package ghshim

import (
	"encoding/json"
	"fmt"
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
			if got, _, ok := guardedGh(strings.Fields(verb)); (!ok || got != verb) && (!f.GhPart || ghVerbs[verb] != verb) {
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

// A gh command that does more than its kind's act (Face.GhPart: an edit
// that may add labels) is guarded only when its command line gives some of
// the kind's flags, in any of gh's spellings, and no other flag but -R:
// with another flag, or none of the kind's, it is the real gh's.
func TestGhPartIsGuardedOnlyForTheKindsFlags(t *testing.T) {
	n := 0
	for _, kind := range kinds.All() {
		f, _ := kinds.FaceOf(kind)
		if !f.GhPart {
			continue
		}
		for _, verb := range f.Gh {
			n++
			words := strings.Fields(verb)
			// The example's command line: its positional arguments, and its
			// flags, each --flag VALUE (a bool's alone).
			var ex map[string]any
			_ = json.Unmarshal([]byte(f.Example), &ex)
			var args, line []string
			for _, fl := range f.Fields {
				vs, list := ex[fl.Name].([]any)
				if v, ok := ex[fl.Name]; ok && !list {
					vs = []any{v}
				}
				for _, v := range vs {
					switch {
					case fl.Arg != "":
						args = append(args, fmt.Sprint(v))
					case fl.GhFlag() != "" && v == true:
						line = append(line, "--"+fl.GhFlag())
					case fl.GhFlag() != "":
						line = append(line, "--"+fl.GhFlag(), fmt.Sprint(v))
					}
				}
			}
			var inline []string // --flag=value
			for i := 0; i < len(line); i++ {
				if strings.HasPrefix(line[i], "--") && i+1 < len(line) && !strings.HasPrefix(line[i+1], "-") {
					inline, i = append(inline, line[i]+"="+line[i+1]), i+1
				} else {
					inline = append(inline, line[i])
				}
			}
			for _, tc := range []struct {
				rest    []string
				guarded bool
			}{
				{slices.Concat(args, line), true},
				{slices.Concat(args, inline, []string{"-R", "o/r"}), true},
				{slices.Concat(line, []string{"--repo", "o/r"}), true},
				{slices.Concat(args, line, []string{"--not-the-kinds", "x"}), false},
				{slices.Concat(args, []string{"--not-the-kinds", "x"}, line), false},
				{slices.Concat(args, []string{"-R", "o/r"}), false},
				{args, false},
			} {
				cmd := slices.Concat(words, tc.rest)
				if got, _, ok := guardedGh(cmd); ok != tc.guarded || ok && got != verb {
					t.Errorf("guardedGh(%q) = %q, %v; want guarded %v", cmd, got, ok, tc.guarded)
				}
			}
		}
	}
	if n == 0 {
		t.Skip("no kind's gh command does more than its act")
	}
}
