package kinds

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/ghonce/ghonce/effect"
)

// DecodeValue is Decode's description as a value, not a pointer: what a
// front builds from the values a user gave it (its fields by JSON name).
func DecodeValue(kind string, payload []byte) (any, error) {
	s, err := Decode(kind, payload)
	if v := reflect.ValueOf(s); err == nil && v.Kind() == reflect.Pointer {
		s = v.Elem().Interface()
	}
	return s, err
}

// FieldTypes are the Go types of kind's fields, by JSON name: what a
// front parses a value given as text into (a number, a switch, a list).
func FieldTypes(kind string) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	s, err := DecodeValue(kind, []byte("{}"))
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

// ExampleLine is kind's Face.Example as a command line's words after its
// verb, each field named by flag ("": not on that front), its arguments
// first: `1 --body 'Fixed in #2.'`.
func ExampleLine(kind string, flag func(effect.Field) string) string {
	f, _ := FaceOf(kind)
	var ex map[string]any
	_ = json.Unmarshal([]byte(f.Example), &ex)
	var args, flags []string
	for _, fl := range f.Fields {
		vs, list := ex[fl.Name].([]any)
		if b, err := base64.StdEncoding.DecodeString(fmt.Sprint(ex[fl.Name])); err == nil && FieldTypes(kind)[fl.Name] == reflect.TypeFor[[]byte]() {
			vs = []any{string(b)}
		} else if v, ok := ex[fl.Name]; ok && !list {
			vs = []any{v}
		}
		for _, v := range vs {
			s := fmt.Sprint(v)
			if strings.ContainsAny(s, " #'\"$&;|<>()") {
				s = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
			}
			for sw, val := range fl.Switches {
				if val == v {
					flags = append(flags, "--"+sw)
				}
			}
			switch n := flag(fl); {
			case fl.Arg != "":
				args = append(args, s)
			case v == true:
				flags = append(flags, "--"+n)
			case n != "":
				flags = append(flags, "--"+n, s)
			}
		}
	}
	return strings.Join(append(args, flags...), " ")
}

// DefaultStep is kind's default step, the step of an action that names
// none; "" for a kind without one.
func DefaultStep(kind string) string {
	v, err := DecodeValue(kind, []byte("{}"))
	if d, ok := v.(interface{ DefaultStep() string }); err == nil && ok {
		return d.DefaultStep()
	}
	return ""
}
