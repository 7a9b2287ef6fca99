package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/spf13/pflag"
)

// fieldValue holds one field's flags as cobra parses them.
type fieldValue struct {
	field    effect.Field
	typ      reflect.Type
	str      string
	strs     []string
	on       bool
	file     string           // --FIELD-file
	switches map[string]*bool // by flag
}

// decodePayload is kind's description from the values a front gathered.
func decodePayload(kind string, payload map[string]any) (reconcile.Spec, error) {
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	spec, err := kinds.DecodeValue(kind, b)
	if err != nil {
		return nil, usage(err)
	}
	return spec.(reconcile.Spec), nil
}

// addFieldFlags adds to fs the flags of kind's fields, each named by name
// (its CLI or gh flag; "": none), and returns what the command line is
// parsed into (an argument's field too) and the usage line's words.
func addFieldFlags(fs *pflag.FlagSet, kind string, fields []effect.Field, name func(effect.Field) string) ([]*fieldValue, []string) {
	types := kinds.FieldTypes(kind)
	var values []*fieldValue
	var args, use []string
	for _, fl := range fields {
		n := name(fl)
		if fl.Arg != "" {
			args = append(args, fl.Arg)
			values = append(values, &fieldValue{field: fl, typ: types[fl.Name]})
			continue
		}
		if n == "" && fl.Switches == nil {
			continue
		}
		fl.Flag = n
		v := &fieldValue{field: fl, typ: types[fl.Name]}
		values = append(values, v)
		switch {
		case fl.Switches != nil:
			v.switches = map[string]*bool{}
			alts := slices.Sorted(maps.Keys(fl.Switches))
			for _, sw := range alts {
				v.switches[sw] = fs.Bool(sw, false, fmt.Sprintf("%s: %s", fl.Help, fl.Switches[sw]))
			}
			use = append(use, optional(fl.Required, "(--"+strings.Join(alts, " | --")+")"))
		case v.typ != nil && v.typ.Kind() == reflect.Bool:
			fs.BoolVarP(&v.on, n, fl.Short, false, fl.Help)
			use = append(use, optional(fl.Required, "--"+n))
		case fl.List:
			fs.StringArrayVarP(&v.strs, n, fl.Short, nil, fl.Help)
			use = append(use, "[--"+n+" "+strings.ToUpper(n[:1])+"]...")
		case records(v.typ):
			fs.StringVarP(&v.file, n, fl.Short, "", fl.Help)
			use = append(use, "[--"+n+" FILE]")
		case fl.File:
			fs.StringVarP(&v.str, n, fl.Short, "", fl.Help)
			fs.StringVarP(&v.file, n+"-file", fl.FileShort, "", `read the `+strings.ReplaceAll(n, "-", " ")+` from a file ("-" for standard input)`)
			use = append(use, optional(fl.Required, fmt.Sprintf("(--%s TEXT | --%[1]s-file F)", n)))
		default:
			fs.StringVarP(&v.str, n, fl.Short, fl.Default, fl.Help)
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

// gatherPayload is the kind's payload the command line gives, by the
// fields' JSON names. A field read from a file or standard input is read
// here; a required one given neither way is a usage error, as is a number
// that is none. Other required fields are the kind's Validate's to refuse,
// as on every front.
//
// changed reports whether a flag was given; required says whether a
// required field read from a file is refused when absent (the gh shim
// infers some instead).
func gatherPayload(changed func(string) bool, values []*fieldValue, args []string, sys IO, check func(map[string]any) error, required bool) (map[string]any, error) {
	w := wordsFor(sys.Getenv)
	payload := map[string]any{}
	files := map[string]string{}
	argi := 0
	for _, v := range values {
		fl := v.field
		name := fl.CLIFlag()
		s, given := v.str, changed(name)
		switch {
		case fl.Arg != "":
			s, given = args[argi], true
			argi++
		case v.switches != nil:
			given = false
			for sw, on := range v.switches {
				if *on && given {
					return nil, usagef("give only one of --%s", strings.Join(slices.Sorted(maps.Keys(v.switches)), ", --"))
				}
				if *on {
					s, given = fl.Switches[sw], true
				}
			}
		case fl.List:
			var items []string
			for _, x := range v.strs {
				for _, it := range strings.Split(x, ",") {
					if it = strings.TrimSpace(it); it != "" {
						items = append(items, it)
					}
				}
			}
			payload[fl.Name] = items
			continue
		case v.typ != nil && v.typ.Kind() == reflect.Bool:
			payload[fl.Name] = v.on
			continue
		case records(v.typ):
			if v.file != "" {
				files[fl.Name] = v.file
			}
			continue
		case fl.File:
			switch {
			case given && v.file != "":
				return nil, usagef("give only one of %s or %s", w.Name(effect.Option{Name: name}), w.Name(effect.Option{Name: name + "-file"}))
			case v.file != "":
				files[fl.Name] = v.file // read once the command line is checked
				continue
			case !given && fl.Required && required:
				return nil, usagef("no %s: %s", strings.ReplaceAll(name, "-", " "), w.Set(effect.Option{Name: name}))
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
		path, ok := files[v.field.Name]
		if !ok {
			continue
		}
		name := v.field.CLIFlag()
		flag := "--" + name + "-file"
		if records(v.typ) {
			flag = "--" + name
		}
		data, err := readPathOrStdin(flag, strings.ReplaceAll(name, "-", " "), path, sys.In)
		if err != nil {
			return nil, err
		}
		if payload[v.field.Name], err = typed(v, string(data)); err != nil {
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
func typed(v *fieldValue, s string) (any, error) {
	if v.typ == nil {
		return s, nil
	}
	switch v.typ.Kind() {
	case reflect.Int, reflect.Int64:
		if s == "" {
			return 0, nil // not given: the kind's Validate says if it must be
		}
		n, err := strconv.Atoi(strings.TrimPrefix(s, "#"))
		if err != nil { // a number Prepare refuses (0) is its to word
			what := strings.ToLower(firstOf(v.field.Arg, "--"+v.field.CLIFlag()))
			return nil, usagef("invalid %s %q: want %s, e.g. 42", what, s, firstOf(v.field.Help, "a whole number"))
		}
		return n, nil
	case reflect.Slice:
		if v.typ.Elem().Kind() == reflect.Uint8 {
			return []byte(s), nil
		}
		if records(v.typ) {
			var out []any
			if err := json.Unmarshal([]byte(s), &out); err != nil {
				return nil, usagef("invalid --%s: %v: want a JSON array of objects", v.field.CLIFlag(), err)
			}
			return out, nil
		}
	}
	return s, nil
}
