package cmdutil

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/reconcile"
)

// FieldValue holds one field's flags as cobra parses them.
type FieldValue struct {
	Field    effect.Field
	Type     reflect.Type
	Str      string
	Strs     []string
	On       bool
	File     string           // --FIELD-file
	Switches map[string]*bool // by flag
}

// DecodePayload is kind's description from the values a front gathered.
func DecodePayload(kind string, payload map[string]any) (reconcile.Spec, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	spec, err := kinds.DecodeValue(kind, b)
	if err != nil {
		return nil, Usage(err)
	}
	return spec.(reconcile.Spec), nil
}

// AddFieldFlags adds to fs the flags of kind's fields, each named by name
// (its CLI or gh flag; "": none), and returns what the command line is
// parsed into (an argument's field too) and the usage line's words.
func AddFieldFlags(fs *pflag.FlagSet, kind string, fields []effect.Field, name func(effect.Field) string) ([]*FieldValue, []string) {
	types := kinds.FieldTypes(kind)
	var values []*FieldValue
	var args, use []string
	for _, fl := range fields {
		n := name(fl)
		if fl.Arg != "" {
			args = append(args, fl.Arg)
			values = append(values, &FieldValue{Field: fl, Type: types[fl.Name]})
			continue
		}
		if n == "" && fl.Switches == nil {
			continue
		}
		fl.Flag = n
		v := &FieldValue{Field: fl, Type: types[fl.Name]}
		values = append(values, v)
		switch {
		case fl.Switches != nil:
			v.Switches = map[string]*bool{}
			alts := slices.Sorted(maps.Keys(fl.Switches))
			for _, sw := range alts {
				v.Switches[sw] = fs.Bool(sw, false, fmt.Sprintf("%s: %s", fl.Help, fl.Switches[sw]))
			}
			use = append(use, optional(fl.Required, "(--"+strings.Join(alts, " | --")+")"))
		case v.Type != nil && v.Type.Kind() == reflect.Bool:
			fs.BoolVarP(&v.On, n, fl.Short, false, fl.Help)
			use = append(use, optional(fl.Required, "--"+n))
		case fl.List:
			fs.StringArrayVarP(&v.Strs, n, fl.Short, nil, fl.Help)
			use = append(use, "[--"+n+" "+strings.ToUpper(n[:1])+"]...")
		case records(v.Type):
			fs.StringVarP(&v.File, n, fl.Short, "", fl.Help)
			use = append(use, "[--"+n+" FILE]")
		case fl.File:
			fs.StringVarP(&v.Str, n, fl.Short, "", fl.Help)
			fs.StringVarP(&v.File, n+"-file", fl.FileShort, "", `read the `+strings.ReplaceAll(n, "-", " ")+` from a file ("-" for standard input)`)
			use = append(use, optional(fl.Required, fmt.Sprintf("(--%s TEXT | --%[1]s-file F)", n)))
		default:
			fs.StringVarP(&v.Str, n, fl.Short, fl.Default, fl.Help)
			use = append(use, optional(fl.Required, "--"+n+" "+strings.ToUpper(n[:1])))
		}
	}
	return values, append(append(args, "--task T"), use...)
}

func optional(required bool, s string) string {
	if required {
		return s
	}
	return "[" + strings.TrimSuffix(strings.TrimPrefix(s, "("), ")") + "]"
}

// GatherPayload is the kind's payload the command line gives, by the
// fields' JSON names. A field read from a file or standard input is read
// here; a required one given neither way is a usage error, as is a number
// that is none. Other required fields are the kind's Validate's to refuse,
// as on every front.
//
// changed reports whether a flag was given; required says whether a
// required field read from a file is refused when absent (the gh shim
// infers some instead).
func GatherPayload(changed func(string) bool, values []*FieldValue, args []string, sys IO, check func(map[string]any) error, required bool) (map[string]any, error) {
	w := WordsFor(sys.Getenv)
	payload := map[string]any{}
	files := map[string]string{}
	argi := 0
	for _, v := range values {
		fl := v.Field
		name := fl.CLIFlag()
		s, given := v.Str, changed(name)
		switch {
		case fl.Arg != "":
			s, given = args[argi], true
			argi++
		case v.Switches != nil:
			given = false
			for sw, on := range v.Switches {
				if *on && given {
					return nil, Usagef("give only one of --%s", strings.Join(slices.Sorted(maps.Keys(v.Switches)), ", --"))
				}
				if *on {
					s, given = fl.Switches[sw], true
				}
			}
			if !given && fl.Required && required {
				return nil, Usagef("give %s", OneOf(slices.Sorted(maps.Keys(v.Switches)), "--%s"))
			}
		case fl.List:
			var items []string
			for _, x := range v.Strs {
				for _, it := range strings.Split(x, ",") {
					if it = strings.TrimSpace(it); it != "" {
						items = append(items, it)
					}
				}
			}
			payload[fl.Name] = items
			continue
		case v.Type != nil && v.Type.Kind() == reflect.Bool:
			payload[fl.Name] = v.On
			continue
		case records(v.Type):
			if v.File != "" {
				files[fl.Name] = v.File
			}
			continue
		case fl.File:
			switch {
			case given && v.File != "":
				return nil, Usagef("give only one of %s or %s", w.Name(effect.Option{Name: name}), w.Name(effect.Option{Name: name + "-file"}))
			case v.File != "":
				files[fl.Name] = v.File // read once the command line is checked
				continue
			case !given && fl.Required && required:
				return nil, Usagef("no %s: %s", strings.ReplaceAll(name, "-", " "), w.Set(effect.Option{Name: name}))
			}
		}
		if !given && fl.Arg == "" {
			s = fl.Default
		}
		val, err := typed(v, s)
		if err != nil {
			return nil, err
		}
		payload[fl.Name] = val
	}
	if check != nil {
		if err := check(payload); err != nil {
			return nil, err
		}
	}
	for _, v := range values {
		path, ok := files[v.Field.Name]
		if !ok {
			continue
		}
		name := v.Field.CLIFlag()
		flag := "--" + name + "-file"
		if records(v.Type) {
			flag = "--" + name
		}
		data, err := readPathOrStdin(flag, strings.ReplaceAll(name, "-", " "), path, sys.In)
		if err != nil {
			return nil, err
		}
		if payload[v.Field.Name], err = typed(v, string(data)); err != nil {
			return nil, err
		}
	}
	return payload, nil
}

// records reports whether a field of Go type t is a list of objects (a
// review's inline comments): its flag names a JSON file holding them ("-"
// for standard input).
func records(t reflect.Type) bool {
	return t != nil && t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct
}

// typed is s as the kind's field v holds it.
func typed(v *FieldValue, s string) (any, error) {
	if v.Type == nil {
		return s, nil
	}
	switch v.Type.Kind() {
	case reflect.Int, reflect.Int64:
		if s == "" {
			return 0, nil // not given: the kind's Validate says if it must be
		}
		n, err := strconv.Atoi(strings.TrimPrefix(s, "#"))
		if err != nil { // a number Prepare refuses (0) is its to word
			what := strings.ToLower(FirstOf(v.Field.Arg, "--"+v.Field.CLIFlag()))
			return nil, Usagef("invalid %s %q: want %s, e.g. 42", what, s, FirstOf(v.Field.Help, "a whole number"))
		}
		return n, nil
	case reflect.Slice:
		if v.Type.Elem().Kind() == reflect.Uint8 {
			return []byte(s), nil
		}
		if records(v.Type) {
			var out []any
			if err := json.Unmarshal([]byte(s), &out); err != nil {
				return nil, Usagef("invalid --%s: %v: want a JSON array of objects", v.Field.CLIFlag(), err)
			}
			return out, nil
		}
	}
	return s, nil
}

// OneOf says "a, b or c" of items, each written with format.
func OneOf(items []string, format string) string {
	for i := range items {
		items[i] = fmt.Sprintf(format, items[i])
	}
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
