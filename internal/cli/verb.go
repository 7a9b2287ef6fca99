package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/actions"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/reconcile"
)

// A kind's acting verbs (Face.CLI, "release create") are built here from
// its declaration: the positional argument and flags from Face.Fields, the
// help from Face.Does, the shared act flags; the values make the kind's
// JSON payload, which the registry decodes (reconcile.DecodeSpec), and the
// action runs as every acting verb's does (runAction). A kind needs no CLI
// code of its own; what a verb says or checks beyond its declaration is a
// verbHook.

// verbHook is what one acting verb has beyond its kind's declaration.
type verbHook struct {
	// long is the help's prose, without the exit codes; "" is the
	// kind's Does.
	long string
	// check refuses values the kind's Validate would take otherwise, by
	// the payload's field names, before anything is read or recorded.
	check func(payload map[string]any) error
}

// verbHooks are the verbs' hooks, by verb ("branch create").
var verbHooks = map[string]verbHook{
	"pr create": {long: `Open a pull request once per (task, step, repository, base).

The key does not include the head, title or body: a retry after a crash that
rewords the body or pushed to another branch gets the first pull request back
(outcome "found" or "skipped", payload_changed true, changed naming the fields
that differ), never a second one. --on-change says what then: auto (default,
or GHONCE_ON_CHANGE: a reworded retry is warned of, and a title that reads as
another pull request fails with exit 1, naming the first and the --step to
use; docs/design/same-act.md), warn (a warning, the pull request as it is),
fail (exit 1, nothing changed) or update (edit its title and body to this
run's; its head cannot move). A second pull request in the same task needs
its own --step.

Prints the pull request's URL on stdout; with --json one object with key,
outcome (created|found|skipped), number, url, payload_changed, changed and
updated.`},
	"issue create": {long: `File an issue once per (task, step, repository).

The issue carries the label ghonce:<key> (set when it is created) and a hidden
marker with the key; both are looked for before filing.`},
	"pr review": {long: `Review a pull request once per (task, step, repository, number).

One request makes the review with its event, its text and its inline comments
(--comments FILE, a JSON array as GitHub takes them). A hidden marker with the
key opens its text; before reviewing, every page of the pull request's reviews
is read for one by you that carries it. A pending review of yours for the key
(left by a pending flow that was cut short) is submitted, never doubled. GitHub
refuses --approve and --request-changes on your own pull request: exit 1,
nothing made.`,
		check: func(p map[string]any) error {
			if p["event"] == "" {
				return usagef("give --comment, --approve or --request-changes")
			}
			return nil
		}},
	"issue comment": {long: commentLong},
	"pr comment": {long: commentLong + `

With --path and --line, the comment is on that line of the pull request's
diff (--side LEFT for the base's line, --start-line for several lines, on the
head unless --commit names another commit), once per (task, step, repository,
pull request, path, line, side): two lines are two comments without a step,
and a reworded comment on the same line is the same act. --reply-to ID
replies in the thread of inline comment ID, once per comment replied to.`},
	"branch create": {long: `Create a branch once per (task, step, repository, name).

The branch is found by an exact ref read. If it exists at the intended commit,
or at a commit that descends from it, it counts as done; a branch of that name
at an unrelated commit is someone else's: exit 1, never adopted.

--from REF is resolved on GitHub while the branch is looked for (one round
trip for both); the commit REF names then is recorded in the ledger before the
branch is created. A rerun resolves REF again, never starting from a commit the
ledger recorded: a branch an earlier attempt made at REF's head of then (which
REF's head now descends from) is found; one it did not make is created at REF's
head now.
With neither --sha nor --from, the branch starts from the default branch.`,
		check: func(p map[string]any) error {
			if p["sha"] != "" && p["from"] != "" {
				return usagef("give --sha SHA or --from REF, not both")
			}
			return nil
		}},
	"file put": {long: `Write a file on a branch once per (task, step, repository, branch, path).

It counts as done when the file on the branch already has exactly the intended
content (git blob hashes, computed locally); different content means not yet.

Without --branch, the file goes to the repository's default branch, read from
GitHub first; the key is the same as with --branch set to that branch (ghonce
key --kind file --target BRANCH:PATH prints it).`},
}

const commentLong = `Post a comment once per (task, step, repository, number).

GitHub has no uniqueness for comments: ghonce puts a hidden marker with the
key on the comment's first line and, before posting, reads every page of the
thread for a comment by you that carries it. A retry with a reworded body gets
the first comment back.`

// kindRun is an acting verb's command line, parsed and decoded.
type kindRun struct {
	f        *factory
	Act      actFlags
	Kind     string
	Spec     reconcile.Spec
	OnChange string // --on-change, for a kind that can be updated
	names    func(field string) string
}

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

// newCmdKind is `ghonce VERB` for kind, built from its Face. runF, when a
// test gives one, gets the decoded command line instead of the run.
func newCmdKind(f *factory, kind, verb string, runF func(*kindRun) error) *cobra.Command {
	face, _ := kinds.FaceOf(kind)
	hook := verbHooks[verb]
	r := &kindRun{f: f, Kind: kind, names: verbNames(face)}
	c := &cobra.Command{
		Short: face.Does + " once per (task, step)",
		Long:  firstOf(hook.long, face.Does+" once per (task, step).") + "\n\n" + exitCodesHelp,
	}
	values, use := addFieldFlags(c.Flags(), kind, face.Fields, effect.Field.CLIFlag)
	sharers := sharedVerb(c, kind, verb, face, &use)
	c.Use = verb[strings.LastIndex(verb, " ")+1:] + " " + strings.Join(use, " ")
	for i := -1; i < len(sharers); i++ { // the verb's kind's example, then its sharers'
		k := kind
		if i >= 0 {
			k = sharers[i].kind
		}
		if line := kinds.ExampleLine(k, effect.Field.CLIFlag); line != "" {
			c.Example += "  ghonce " + verb + " " + line + " --task ISSUE-1\n"
		}
	}
	nargs := 0
	for _, v := range values {
		if v.field.Arg != "" {
			nargs++
		}
	}
	c.Args = cobra.ExactArgs(nargs)
	c.RunE = func(c *cobra.Command, args []string) error {
		kind, values := kind, values
		for _, sh := range sharers {
			if slices.ContainsFunc(sh.own, func(v *fieldValue) bool { return c.Flags().Changed(v.field.CLIFlag()) }) {
				kind, r.Kind, r.names = sh.kind, sh.kind, sh.names
				values = slices.Concat(slices.DeleteFunc(slices.Clone(values), func(v *fieldValue) bool { _, ok := sh.face.Field(v.field.Name); return !ok }), sh.own)
				break
			}
		}
		payload, err := gatherPayload(c.Flags().Changed, values, args, f.sys, hook.check, true)
		if err != nil {
			return err
		}
		if r.Spec, err = decodePayload(kind, payload); err != nil {
			return err
		}
		return runOr(c.Context(), r, runF, runKind)
	}
	if blank, _ := kinds.DecodeValue(kind, []byte("{}")); blank != nil {
		if _, ok := blank.(reconcile.Updatable); ok {
			c.Flags().StringVar(&r.OnChange, "on-change", reconcile.OnChangeAuto, onChangeHelp)
		}
	}
	addActFlags(c, &r.Act)
	return c
}

// sharer is another kind whose Face.CLI names a verb too: its fields the
// verb's kind lacks (own) join the verb's flags, and a run that gives one
// of them is that kind's (`pr comment --path`: an inline comment).
type sharer struct {
	kind  string
	face  effect.Face
	own   []*fieldValue
	names func(string) string
}

// sharedVerb adds to c the flags of the kinds after kind (in kinds.All's
// order) that share verb, and their words to use.
func sharedVerb(c *cobra.Command, kind, verb string, face effect.Face, use *[]string) []sharer {
	var out []sharer
	for _, k := range kinds.All() {
		f, _ := kinds.FaceOf(k)
		if k <= kind || !slices.Contains(f.CLI, verb) {
			continue
		}
		var fields []effect.Field
		for _, fl := range f.Fields {
			if _, dup := face.Field(fl.Name); !dup {
				fields = append(fields, fl)
			}
		}
		own, u := addFieldFlags(c.Flags(), k, fields, effect.Field.CLIFlag)
		*use = append(*use, slices.DeleteFunc(u, func(w string) bool { return w == "--task T" })...)
		out = append(out, sharer{kind: k, face: f, own: own, names: verbNames(f)})
	}
	return out
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

const onChangeHelp = "when the key is done but this description differs (another --head, a new title or body): auto (the same text or a proven retry is warned of; another text exits 7 with the facts), warn, fail (exit 1) or update (edit it to match); GHONCE_ON_CHANGE sets the default"

func optional(required bool, s string) string {
	if required {
		return s
	}
	return "[" + strings.TrimSuffix(strings.TrimPrefix(s, "("), ")") + "]"
}

// runKind runs a verb's action.
func runKind(ctx context.Context, r *kindRun) error {
	o := actOptions{f: r.f, flags: r.Act, spec: r.Spec, onChange: r.OnChange}
	if !actions.ViaAction(r.f.sys.Getenv) {
		o.names = r.names
	}
	return runAction(ctx, o)
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

// verbNames is how a verb of face calls a field of its action in an
// error: the words ghonce's flags always had (flagNames), else the
// field's argument or flag.
func verbNames(face effect.Face) func(string) string {
	return func(field string) string {
		if n, ok := flagNames[field]; ok {
			return n
		}
		fl, ok := face.Field(field)
		switch {
		case !ok:
			return flagName(field)
		case fl.Arg != "":
			return fl.Arg
		case fl.File:
			return fmt.Sprintf("--%s (or --%[1]s-file)", fl.CLIFlag())
		case fl.CLIFlag() != "":
			return "--" + fl.CLIFlag()
		}
		return flagName(field)
	}
}

// verbOf reports whether kind is the one that builds verb: the first kind
// (in kinds.All's order) whose Face.CLI names it; the others share it.
func verbOf(kind, verb string) bool {
	for _, k := range kinds.All() {
		if f, _ := kinds.FaceOf(k); slices.Contains(f.CLI, verb) {
			return k == kind
		}
	}
	return false
}

// nounTitles name a noun's verbs in the root's help; another noun is its
// name with an s.
var nounTitles = map[string]string{"pr": "Pull requests", "branch": "Branches"}

// newCmdNouns are the nouns that group the kinds' verbs (Face.CLI of two
// words) and the verbs of no kind (`branch name`). A verb of one word is
// a command of its own (`ghonce exec`).
func newCmdNouns(f *factory) []*cobra.Command {
	verbs := map[string][]*cobra.Command{"branch": {newCmdBranchName(f, nil)}}
	for _, kind := range kinds.All() {
		face, _ := kinds.FaceOf(kind)
		for _, v := range face.CLI {
			if noun, _, ok := strings.Cut(v, " "); ok && verbOf(kind, v) {
				verbs[noun] = append(verbs[noun], newCmdKind(f, kind, v, nil))
			}
		}
	}
	var out []*cobra.Command
	for _, n := range slices.Sorted(maps.Keys(verbs)) {
		title := nounTitles[n]
		if title == "" {
			title = strings.ToUpper(n[:1]) + n[1:] + "s"
		}
		var names []string
		for _, v := range verbs[n] {
			names = append(names, v.Name())
		}
		slices.Sort(names)
		out = append(out, noun(&cobra.Command{Use: n, Short: title + ": " + strings.Join(names, ", ")}, verbs[n]...))
	}
	return out
}
