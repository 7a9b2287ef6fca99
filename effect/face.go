package effect

import (
	"slices"
	"strings"
)

// Face is what every front needs to know of a kind, declared as data in
// the kind's file (Spec.Face), so that no front describes a kind again:
// the go-github transport routes, decodes and reads back from it, and a
// test holds the CLI, the gh shim and the MCP server to the fronts it
// names. A kind's default step is its DefaultStep, beside it.
//
// The kind's fields, by their JSON names, are its payload in the ledger
// and GitHub's names for them on the wire: a body field of the kind's REST
// write is the kind's field of the same name unless Wire says otherwise.
type Face struct {
	// Write is the REST write the kind stands for, "METHOD path", the path
	// as GitHub's reference writes it after the API root:
	// "POST repos/{owner}/{repo}/issues/{number}/comments". {owner} and
	// {repo} name the repository; every other {param} binds the kind's
	// field of that JSON name, and {param...} the rest of the path. Empty:
	// the kind is no REST write (the go-github transport does not carry
	// it).
	Write string
	// Wire maps a body field whose value is not the kind's field of the
	// same name to what it holds, in the kind's fields: "ref":
	// "refs/heads/{name}" (a value without that prefix is not this kind's
	// write), "sha": "{replaces}".
	Wire map[string]string
	// Unwired are the kind's fields that the REST write does not carry
	// (a PR's labels: GitHub's create takes none, ghonce adds them after).
	Unwired []string
	// Refuses are body fields GitHub's write takes that the kind cannot
	// carry (a PR's maintainer_can_modify): a write with one of them is not
	// the kind's, since dropping it would make something else than asked.
	Refuses []string
	// ReadBack are the GETs that read the artifact back, in the shape
	// GitHub answers Write with; {param} is the result's number or id, else
	// the kind's field of that name. A second path is the commit a
	// contents write answers with beside the file.
	ReadBack []string

	// The other fronts that carry the kind: `ghonce` verbs ("pr create"),
	// gh command lines the gh shim guards, and MCP tools by
	// github-mcp-server's names. Empty: that front does not carry it.
	CLI, Gh, MCP []string
	// GhPart: the gh commands (Gh) do more than the kind's act (an edit
	// that may add labels): only a command line that gives some of the
	// kind's flags and no other (but -R) is guarded; any other is the real
	// gh's.
	GhPart bool

	// Does is the verbs' one line of help: "Create a release".
	Does string
	// Permission is what a job's GITHUB_TOKEN needs for the kind's Action
	// commands, in Markdown, with any remark: "`contents: write`". A
	// `pr` command's `issues: write` is read as `pull-requests: write`.
	Permission string
	// Long is the verbs' help, without the exit codes; "" is Does. A kind
	// that shares another's verb (Face.CLI) adds its Long to the verb's as
	// a paragraph.
	Long string
	// Example is one action of the kind, its fields as JSON, valid and made
	// in the repository testworld's SeedExamples makes: the verbs' help shows
	// it, and every test that runs each kind runs it. Empty: no front has it.
	Example string
	// Fields are the kind's fields as the fronts spell them: the one
	// place a flag, a gh flag, an MCP argument or an Action input is
	// named. A front builds its verb or tool from them.
	Fields []Field
	// Audit is how `ghonce audit` finds its duplicates; nil: the audit
	// does not look at it.
	Audit *Audit
	// Tools are what MCP's tools (by their names) have beyond taking the
	// kind's fields; a tool not here has nothing more.
	Tools map[string]Tool
}

// Tool is what one MCP tool of a kind has beyond the kind's fields.
type Tool struct {
	// Methods: the tool takes a method argument, and these of its values
	// are the kind's act, each run under the --on-change it maps to (""
	// the server's; submit_pending's "update" submits what create made).
	// A call with another method goes upstream as it is, and so, with
	// Body, does a call without a body (a reaction alone). Pass names
	// what goes upstream, for the guides.
	Methods map[string]string
	Body    bool
	Pass    string
	// OnePer is what the default step makes one of per task ("base
	// branch"; "" is "target"), for the guides.
	OnePer string
	// What names the artifact to the model: "PR #{result.number}", each
	// {name} the action's field of that JSON name, {result.number},
	// {result.id} and {result.sha} the result's, {…:12} the first 12
	// characters; "" is the kind and its number, else its target.
	What string
}

// Field is one of a kind's fields on every front. A name left empty is
// the field's JSON name (Name) on that front, with dashes for underscores
// on the CLI and in the Action; "-" says the front does not take the
// field.
type Field struct {
	// Name is the kind's field by its JSON name: "tag_name".
	Name string
	// Arg is the verb's positional argument, in capitals ("NUMBER",
	// "TAG"), on the CLI and in gh; a field with an Arg has no Flag.
	Arg string
	// Flag is the CLI flag ("notes") and Short its one-letter form ("n"),
	// both gh's too unless Gh says otherwise; Input is the Action's input
	// where it differs from the flag, MCP the MCP tool's argument where it
	// differs from Name.
	Flag, Short, Gh, Input, MCP string
	// Help is the flag's one line of help, as the CLI prints it.
	Help string
	// Default is the flag's default, as the CLI shows it.
	Default string
	// File: the CLI and gh also read the field from a file, --<Flag>-file
	// F ("-" for standard input), FileShort its one-letter form, as gh
	// does for bodies. An Input ending in "-file" is the Action's only
	// input for the field, a file on the runner.
	File      bool
	FileShort string
	// List: the flag repeats, and a comma list splits (gh's --label).
	List bool
	// Switches set the field from flags of their own: "approve":
	// "APPROVE" makes --approve set the field to APPROVE. The field then
	// has no Flag of its own.
	Switches map[string]string
	// Required: the verb refuses to run without the field (which may
	// still be empty where the kind allows it: a body given as "").
	Required bool
}

// CLIFlag is the field's CLI flag: Flag, or the JSON name with
// underscores as dashes; "" when the field is an argument, is set by
// switches, or is not on the CLI.
func (f Field) CLIFlag() string {
	switch {
	case f.Arg != "" || f.Switches != nil || f.Flag == "-":
		return ""
	case f.Flag != "":
		return f.Flag
	}
	return strings.ReplaceAll(f.Name, "_", "-")
}

// GhFlag is the field's gh flag: Gh, else the CLI's; "" as CLIFlag.
func (f Field) GhFlag() string {
	switch {
	case f.Gh == "-":
		return ""
	case f.Gh != "":
		return f.Gh
	}
	return f.CLIFlag()
}

// MCPArg is the field's MCP argument: MCP, else the JSON name; "" when
// the MCP tools do not take it.
func (f Field) MCPArg() string {
	switch f.MCP {
	case "-":
		return ""
	case "":
		return f.Name
	}
	return f.MCP
}

// ActionInput is the field's input in action.yml: Input, else the CLI
// flag, else (an argument) the JSON name with underscores as dashes; ""
// when the Action does not take it.
func (f Field) ActionInput() string {
	switch {
	case f.Input == "-":
		return ""
	case f.Input != "":
		return f.Input
	case f.CLIFlag() != "":
		return f.CLIFlag()
	}
	return strings.ReplaceAll(f.Name, "_", "-")
}

// Field returns the kind's field named name (its JSON name).
func (f Face) Field(name string) (Field, bool) {
	for _, fl := range f.Fields {
		if fl.Name == name {
			return fl, true
		}
	}
	return Field{}, false
}

// Params are the path parameters f's Write binds to the kind's fields
// (owner and repo, the repository, left out).
func (f Face) Params() []string {
	var out []string
	for _, seg := range strings.Split(f.Write, "/") {
		if p, ok := param(seg); ok && p != "owner" && p != "repo" {
			out = append(out, strings.TrimSuffix(p, "..."))
		}
	}
	return out
}

// WireParam returns the field a Wire value or a path segment names
// ("refs/heads/{name}": name).
func WireParam(v string) (string, bool) {
	i, j := strings.Index(v, "{"), strings.LastIndex(v, "}")
	if i < 0 || j < i {
		return "", false
	}
	return strings.TrimSuffix(v[i+1:j], "..."), true
}

// param returns the parameter a whole path segment is ("{number}":
// number; "{path...}": path...).
func param(seg string) (string, bool) {
	if len(seg) > 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
		return seg[1 : len(seg)-1], true
	}
	return "", false
}

// WireName is what f's REST write calls the kind's field: a path
// parameter (inPath), the body field Wire maps to it, or the body field
// of the same name. A front names a field of an invalid action by it.
func (f Face) WireName(field string) (name string, inPath bool) {
	if slices.Contains(f.Params(), field) {
		return field, true
	}
	for k, v := range f.Wire {
		if p, ok := WireParam(v); ok && p == field {
			return k, false
		}
	}
	return field, false
}
