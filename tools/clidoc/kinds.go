package clidoc

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/internal/cli"
	"github.com/ghonce/ghonce/kinds"
)

// kindSections renders the sections every kind's Face declares: the kinds
// table (docs/reference/kinds.md), the writes guard recognises, and
// action.yml's command input, its kinds' inputs, its script's inputs and
// its dispatch, with the guide's table of those inputs and of the
// permissions each command needs (docs/guide/github-actions.md).
func kindSections() (map[string]string, error) {
	root := cli.Command(emptyIO())
	var table, writes, others, commands, env, arms, inputs, perms strings.Builder
	table.WriteString("| kind | what it does | default step | `ghonce` | `gh` (the shim) | MCP tools | Action `command` |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	writes.WriteString("| REST write | kind | default step |\n| --- | --- | --- |\n")
	perms.WriteString("| command | needs |\n| --- | --- |\n")
	var all, order []string
	uses := map[string][]actionIn{} // an input's uses, by input
	for _, kind := range kinds.All() {
		f, _ := kinds.FaceOf(kind)
		step := code(kinds.DefaultStep(kind))
		if f.Write != "" {
			fmt.Fprintf(&writes, "| `%s` | `%s` | %s |\n", f.Write, kind, step)
		}
		if f.Does == "" {
			others.WriteString(", `" + kind + "`")
			continue
		}
		var cmds []string
		for _, verb := range f.CLI {
			cmd := strings.ReplaceAll(verb, " ", "-")
			if !kinds.OnGitHub(kind) || !strings.Contains(verb, " ") {
				continue
			}
			if slices.Contains(all, cmd) {
				continue // a verb kinds share (pr comment) is the first's arm
			}
			if f.Permission == "" {
				return nil, fmt.Errorf("kind %s: its Face has an Action command, %s, and no Permission", kind, cmd)
			}
			perm := f.Permission
			if strings.HasPrefix(verb, "pr ") { // GitHub takes a PR's for the issues API on a PR
				perm = strings.ReplaceAll(perm, "`issues: write`", "`pull-requests: write`")
			}
			fmt.Fprintf(&perms, "| `%s` | %s |\n", cmd, perm)
			cmds = append(cmds, cmd)
			all = append(all, cmd)
			arm, ins, err := actionArm(root, verb)
			if err != nil {
				return nil, err
			}
			arms.WriteString(arm)
			for _, in := range ins {
				if uses[in.name] == nil {
					order = append(order, in.name)
					fmt.Fprintf(&env, "        %s: ${{ inputs.%s }}\n", envName(in.name), in.name)
				}
				uses[in.name] = append(uses[in.name], in)
			}
		}
		if len(cmds) > 0 {
			fmt.Fprintf(&commands, "%s (%s); ", strings.Join(cmds, ", "), lowerFirst(f.Does))
		}
		fmt.Fprintf(&table, "| `%s` | %s | %s | %s | %s | %s | %s |\n", kind, f.Does, step,
			codes("ghonce ", f.CLI), codes("gh ", f.Gh), codes("", f.MCP), codes("", cmds))
	}
	if others.Len() > 0 {
		fmt.Fprintf(&table, "\nKinds only ghonce itself makes (`ghonce audit --apply`, `ghonce mcp --upstream`'s generic guard): %s.\n", strings.TrimPrefix(others.String(), ", "))
	}
	guide := "| input | what |\n| --- | --- |\n"
	for _, name := range order {
		desc, err := inputDoc(uses[name])
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&inputs, "  %s:\n    description: >-\n%s    required: false\n    default: %q\n", name, wrap(desc, "      ", 80), uses[name][0].def)
		guide += fmt.Sprintf("| `%s` | %s |\n", name, desc)
	}
	want := strings.Join(all, ", ") + ", reconcile or status"
	fmt.Fprintf(&arms, "          *)\n            echo \"::error title=ghonce::unknown command input: want %s\"\n            exit 2 ;;\n", want)
	return map[string]string{
		"kinds":              table.String(),
		"guard-writes":       writes.String(),
		"action-command":     "  command:\n    description: >-\n" + wrap("What to do, once per (task, step): "+commands.String()+"reconcile or status.", "      ", 80) + "    required: true\n",
		"action-inputs":      inputs.String(),
		"action-env":         env.String(),
		"action-dispatch":    arms.String(),
		"action-input-table": guide,
		"action-permissions": perms.String(),
	}, nil
}

// actionIn is one use of an Action input: by the command cmd, for a field
// said by help, whose default is def.
type actionIn struct{ name, cmd, help, def string }

// inputDoc is an input's description: each help, with the commands that
// give it that meaning.
func inputDoc(uses []actionIn) (string, error) {
	var helps []string
	by := map[string][]string{}
	for _, u := range uses {
		if u.help == "" {
			return "", fmt.Errorf("action.yml: input %s of %s: its field has no Help to describe it", u.name, u.cmd)
		}
		if by[u.help] == nil {
			helps = append(helps, u.help)
		}
		by[u.help] = append(by[u.help], u.cmd)
	}
	for i, h := range helps {
		helps[i] = h + " (" + strings.Join(by[h], ", ") + ")"
	}
	return upperFirst(strings.Join(helps, "; ") + "."), nil
}

// actionArm is action.yml's dispatch arm for `ghonce VERB`: the command
// line it builds from the Action's inputs (Field.ActionInput), and the
// inputs it reads.
func actionArm(root *cobra.Command, verb string) (string, []actionIn, error) {
	c, _, err := root.Find(strings.Fields(verb))
	if err != nil {
		return "", nil, fmt.Errorf("action.yml: %s: %w", verb, err)
	}
	cmd := strings.ReplaceAll(verb, " ", "-")
	args := []string{"args=(" + verb}
	var stmts []string
	var inputs []actionIn
	seen := map[string]bool{}
	for _, kind := range kinds.All() {
		f, _ := kinds.FaceOf(kind)
		if !slices.Contains(f.CLI, verb) {
			continue
		}
		types := kinds.FieldTypes(kind)
		for _, fl := range f.Fields {
			in := fl.ActionInput()
			if in == "" || seen[fl.Name] {
				continue
			}
			seen[fl.Name] = true
			help := strings.TrimSuffix(fl.Help, " (required)")
			use := actionIn{name: in, cmd: cmd, help: help}
			v := `"$` + envName(in) + `"`
			flag := "--" + fl.CLIFlag()
			switch {
			case fl.Arg != "":
				args = append(args, v)
			case fl.Switches != nil:
				use.help += ": " + strings.Join(slices.Sorted(maps.Keys(fl.Switches)), ", ")
				stmts = append(stmts, `args+=("--$`+envName(in)+`")`)
			case types[fl.Name] != nil && types[fl.Name].Kind() == reflect.Bool:
				use.help, use.def = help+", true or false", "false"
				stmts = append(stmts, "on "+flag+" "+v)
			case fl.List:
				use.help += ", one per line or comma-separated"
				stmts = append(stmts, "list "+flag+" "+v)
			case fl.File && strings.HasSuffix(in, "-file") && fl.Required:
				use.help = "a file on the runner with the " + help
				stmts = append(stmts, "args+=("+flag+"-file "+v+")")
			case fl.File && !strings.HasSuffix(in, "-file"):
				inputs = append(inputs, use, actionIn{name: in + "-file", cmd: cmd, help: "a file on the runner to read `" + in + "` from instead"})
				s := "text " + flag + " " + v + ` "$` + envName(in+"-file") + `"`
				if !fl.Required {
					s += " opt"
				}
				stmts = append(stmts, s)
				continue
			default:
				stmts = append(stmts, "opt "+flag+" "+v)
			}
			inputs = append(inputs, use)
		}
	}
	if c.Flags().Lookup("on-change") != nil {
		stmts = append(stmts, `opt --on-change "$IN_ON_CHANGE"`)
	}
	stmts = append([]string{strings.Join(args, " ") + ")"}, stmts...)
	var b strings.Builder
	fmt.Fprintf(&b, "          %s)\n            %s ;;\n", cmd, strings.Join(stmts, "\n            "))
	return b.String(), inputs, nil
}

// envName is the variable action.yml's script reads input in from.
func envName(in string) string { return "IN_" + strings.ToUpper(strings.ReplaceAll(in, "-", "_")) }

func code(s string) string {
	if s == "" {
		return ""
	}
	return "`" + s + "`"
}

// codes is xs as code, each after prefix, comma-separated.
func codes(prefix string, xs []string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = code(prefix + x)
	}
	return strings.Join(out, ", ")
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }
func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// wrap folds text into lines of at most width, each after indent.
func wrap(text, indent string, width int) string {
	var b strings.Builder
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(indent)+len(line)+1+len(w) > width {
			b.WriteString(indent + line + "\n")
			line = ""
		}
		line = strings.TrimPrefix(line+" "+w, " ")
	}
	b.WriteString(indent + line + "\n")
	return b.String()
}
