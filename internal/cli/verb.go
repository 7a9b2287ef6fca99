package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/actions"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/reconcile"
)

// A kind's acting verbs (Face.CLI, "release create") are built here from
// its declaration: the positional argument and flags from Face.Fields, the
// help from Face.Does and Face.Long, the shared act flags; the values make
// the kind's JSON payload, which the registry decodes
// (reconcile.DecodeSpec), and the action runs as every acting verb's does
// (RunAction). A kind needs no CLI code of its own; what a verb checks
// beyond its declaration is in verbChecks.

// verbChecks refuse values a verb's kind's Validate would take otherwise,
// by the payload's field names, before anything is read or recorded; by
// verb ("branch create").
var verbChecks = map[string]func(payload map[string]any) error{
	"pr review": func(p map[string]any) error {
		if p["event"] == "" {
			return cmdutil.Usagef("give --comment, --approve or --request-changes")
		}
		return nil
	},
	"branch create": func(p map[string]any) error {
		if p["sha"] != "" && p["from"] != "" {
			return cmdutil.Usagef("give --sha SHA or --from REF, not both")
		}
		return nil
	},
}

// kindRun is an acting verb's command line, parsed and decoded.
type kindRun struct {
	f        *cmdutil.Factory
	Act      cmdutil.ActFlags
	Kind     string
	Spec     reconcile.Spec
	OnChange string // --on-change, for a kind that can be updated
	names    func(field string) string
}

// newCmdKind is `ghonce VERB` for kind, built from its Face. runF, when a
// test gives one, gets the decoded command line instead of the run.
func newCmdKind(f *cmdutil.Factory, kind, verb string, runF func(*kindRun) error) *cobra.Command {
	face, _ := kinds.FaceOf(kind)
	r := &kindRun{f: f, Kind: kind, names: verbNames(face)}
	c := &cobra.Command{
		Short: face.Does + " once per (task, step)",
	}
	values, use := cmdutil.AddFieldFlags(c.Flags(), kind, face.Fields, effect.Field.CLIFlag)
	sharers := sharedVerb(c, kind, verb, face, &use)
	c.Long = cmdutil.FirstOf(face.Long, face.Does+" once per (task, step).")
	for _, sh := range sharers {
		if sh.face.Long != "" {
			c.Long += "\n\n" + sh.face.Long
		}
	}
	c.Long += "\n\n" + exitCodesHelp
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
		if v.Field.Arg != "" {
			nargs++
		}
	}
	c.Args = cobra.ExactArgs(nargs)
	c.RunE = func(c *cobra.Command, args []string) error {
		kind, values := kind, values
		for _, sh := range sharers {
			if slices.ContainsFunc(sh.own, func(v *cmdutil.FieldValue) bool { return c.Flags().Changed(v.Field.CLIFlag()) }) {
				kind, r.Kind, r.names = sh.kind, sh.kind, sh.names
				values = slices.Concat(slices.DeleteFunc(slices.Clone(values), func(v *cmdutil.FieldValue) bool { _, ok := sh.face.Field(v.Field.Name); return !ok }), sh.own)
				break
			}
		}
		payload, err := cmdutil.GatherPayload(c.Flags().Changed, values, args, f.IO, verbChecks[verb], true)
		if err != nil {
			return err
		}
		if r.Spec, err = cmdutil.DecodePayload(kind, payload); err != nil {
			return err
		}
		return cmdutil.RunOr(c.Context(), r, runF, runKind)
	}
	if blank, _ := kinds.DecodeValue(kind, []byte("{}")); blank != nil {
		if _, ok := blank.(reconcile.Updatable); ok {
			c.Flags().StringVar(&r.OnChange, "on-change", reconcile.OnChangeAuto, onChangeHelp)
		}
	}
	cmdutil.AddActFlags(c, &r.Act)
	return c
}

// sharer is another kind whose Face.CLI names a verb too: its fields the
// verb's kind lacks (own) join the verb's flags, and a run that gives one
// of them is that kind's (`pr comment --path`: an inline comment).
type sharer struct {
	kind  string
	face  effect.Face
	own   []*cmdutil.FieldValue
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
		own, u := cmdutil.AddFieldFlags(c.Flags(), k, fields, effect.Field.CLIFlag)
		*use = append(*use, slices.DeleteFunc(u, func(w string) bool { return w == "--task T" })...)
		out = append(out, sharer{kind: k, face: f, own: own, names: verbNames(f)})
	}
	return out
}

const onChangeHelp = "when the key is done but this description differs (another --head, a new title or body): auto (the same text or a proven retry is warned of; another text exits 7 with the facts), warn, fail (exit 1) or update (edit it to match); GHONCE_ON_CHANGE sets the default"

// runKind runs a verb's action.
func runKind(ctx context.Context, r *kindRun) error {
	o := cmdutil.ActOptions{Factory: r.f, Flags: r.Act, Spec: r.Spec, OnChange: r.OnChange}
	if !actions.ViaAction(r.f.IO.Getenv) {
		o.Names = r.names
	}
	return cmdutil.RunAction(ctx, o)
}

// verbNames is how a verb of face calls a field of its action in an
// error: the words ghonce's flags always had (FlagNames), else the
// field's argument or flag.
func verbNames(face effect.Face) func(string) string {
	return func(field string) string {
		if n, ok := cmdutil.FlagNames[field]; ok {
			return n
		}
		fl, ok := face.Field(field)
		switch {
		case !ok:
			return cmdutil.FlagName(field)
		case fl.Arg != "":
			return fl.Arg
		case fl.File:
			return fmt.Sprintf("--%s (or --%[1]s-file)", fl.CLIFlag())
		case fl.CLIFlag() != "":
			return "--" + fl.CLIFlag()
		}
		return cmdutil.FlagName(field)
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
func newCmdNouns(f *cmdutil.Factory) []*cobra.Command {
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
