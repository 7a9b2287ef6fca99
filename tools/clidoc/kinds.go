package clidoc

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/internal/cli"
	"github.com/ghonce/ghonce/kinds"
)

// kindSections renders the sections every kind's Face declares: the kinds
// table (docs/reference/kinds.md), the writes guard recognises, and
// action.yml's command input, its script's inputs and its dispatch.
func kindSections() (map[string]string, error) {
	root := cli.Command(emptyIO())
	var table, writes, others, commands, env, arms strings.Builder
	table.WriteString("| kind | what it does | default step | `ghonce` | `gh` (the shim) | MCP tools | Action `command` |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	writes.WriteString("| REST write | kind | default step |\n| --- | --- | --- |\n")
	var all []string
	envSeen := map[string]bool{}
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
			cmds = append(cmds, cmd)
			all = append(all, cmd)
			arm, inputs, err := actionArm(root, verb)
			if err != nil {
				return nil, err
			}
			arms.WriteString(arm)
			for _, in := range inputs {
				if !envSeen[in] {
					envSeen[in] = true
					fmt.Fprintf(&env, "        %s: ${{ inputs.%s }}\n", envName(in), in)
				}
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
	want := strings.Join(all, ", ") + ", reconcile or status"
	fmt.Fprintf(&arms, "          *)\n            echo \"::error title=ghonce::unknown command input: want %s\"\n            exit 2 ;;\n", want)
	return map[string]string{
		"kinds":           table.String(),
		"guard-writes":    writes.String(),
		"action-command":  "  command:\n    description: >-\n" + wrap("What to do, once per (task, step): "+commands.String()+"reconcile or status.", "      ", 80) + "    required: true\n",
		"action-env":      env.String(),
		"action-dispatch": arms.String(),
	}, nil
}

// actionArm is action.yml's dispatch arm for `ghonce VERB`: the command
// line it builds from the Action's inputs (Field.ActionInput), and the
// inputs it reads.
func actionArm(root *cobra.Command, verb string) (string, []string, error) {
	c, _, err := root.Find(strings.Fields(verb))
	if err != nil {
		return "", nil, fmt.Errorf("action.yml: %s: %w", verb, err)
	}
	args := []string{"args=(" + verb}
	var stmts, inputs []string
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
			inputs = append(inputs, in)
			v := `"$` + envName(in) + `"`
			flag := "--" + fl.CLIFlag()
			switch {
			case fl.Arg != "":
				args = append(args, v)
			case fl.Switches != nil:
				stmts = append(stmts, `args+=("--$`+envName(in)+`")`)
			case types[fl.Name] != nil && types[fl.Name].Kind() == reflect.Bool:
				stmts = append(stmts, "on "+flag+" "+v)
			case fl.List:
				stmts = append(stmts, "list "+flag+" "+v)
			case fl.File && strings.HasSuffix(in, "-file") && fl.Required:
				stmts = append(stmts, "args+=("+flag+"-file "+v+")")
			case fl.File && !strings.HasSuffix(in, "-file"):
				inputs = append(inputs, in+"-file")
				s := "text " + flag + " " + v + ` "$` + envName(in+"-file") + `"`
				if !fl.Required {
					s += " opt"
				}
				stmts = append(stmts, s)
			default:
				stmts = append(stmts, "opt "+flag+" "+v)
			}
		}
	}
	if c.Flags().Lookup("on-change") != nil {
		stmts = append(stmts, `opt --on-change "$IN_ON_CHANGE"`)
	}
	stmts = append([]string{strings.Join(args, " ") + ")"}, stmts...)
	var b strings.Builder
	fmt.Fprintf(&b, "          %s)\n            %s ;;\n", strings.ReplaceAll(verb, " ", "-"), strings.Join(stmts, "\n            "))
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
