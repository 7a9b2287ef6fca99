package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/internal/mcp"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/outcome"
)

// Every kind is on every front its Face claims, and every
// acting verb and MCP tool is some kind's (the gh shim's commands:
// ghshim's TestEveryKindIsOnTheShimItClaims): a kind cannot be added
// to one front and forgotten on another. (The go-github transport routes
// from the Face itself; guard's TestEveryDeclaredWriteIsGuarded checks
// it.)
func TestEveryKindIsOnTheFrontsItClaims(t *testing.T) {
	root, _ := newRoot(IO{Getenv: func(string) string { return "" }})
	claimedCLI, claimedMCP := map[string]bool{}, map[string]bool{}
	for _, kind := range kinds.All() {
		f, _ := kinds.FaceOf(kind)
		for _, verb := range f.CLI {
			claimedCLI[verb] = true
			words := strings.Fields(verb)
			c, rest, err := root.Find(words)
			if err != nil || len(rest) > 0 || c.Name() != words[len(words)-1] {
				t.Errorf("%s claims `ghonce %s`, which is no command", kind, verb)
			} else if c.Flags().Lookup("task") == nil {
				t.Errorf("%s claims `ghonce %s`, which takes no --task", kind, verb)
			}
		}
		for _, tool := range f.MCP {
			claimedMCP[tool] = true
		}
		for tool := range f.Tools {
			if !slices.Contains(f.MCP, tool) {
				t.Errorf("%s describes the MCP tool %s (Face.Tools), which its Face.MCP does not name", kind, tool)
			}
		}
	}
	// A verb that acts under a task and step is some kind's; `ghonce key`
	// and `ghonce branch name` only derive a key and a name from them.
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		verb := strings.TrimPrefix(c.CommandPath(), "ghonce ")
		if !c.HasSubCommands() && c.Flags().Lookup("task") != nil && c.Flags().Lookup("step") != nil &&
			verb != "key" && verb != "branch name" && !claimedCLI[verb] {
			t.Errorf("`ghonce %s` acts under a task and step, and no kind's Face claims it", verb)
		}
	}
	walk(root)
	served := mcp.GuardedToolNames()
	for tool := range claimedMCP {
		if !slices.Contains(served, tool) {
			t.Errorf("a kind claims the MCP tool %s, which ghonce mcp does not guard", tool)
		}
	}
	for _, tool := range served {
		if !claimedMCP[tool] {
			t.Errorf("ghonce mcp guards %s, which no kind's Face claims", tool)
		}
	}
}

// action.yml's command input, its dispatch and its list of commands carry
// every acting verb of a kind on GitHub (Face.CLI, "pr create" as
// pr-create), and nothing else but reconcile and status; each arm passes
// only flags its verb takes. A new kind fails here until action.yml
// carries it.
func TestActionCarriesEveryKindsVerb(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	var action struct {
		Inputs map[string]struct{ Description string } `yaml:"inputs"`
	}
	if err := yaml.Unmarshal(b, &action); err != nil {
		t.Fatal(err)
	}
	start := strings.Index(text, `case "$IN_COMMAND" in`)
	end := strings.Index(text[start:], "esac")
	if start < 0 || end < 0 {
		t.Fatal(`action.yml has no case "$IN_COMMAND" in ... esac`)
	}
	dispatch := text[start : start+end]
	arms := map[string]string{} // command: the arm's script
	armRE := regexp.MustCompile(`(?m)^\s*([a-z][a-z-]*(?: \| [a-z][a-z-]*)*)\)\s*$`)
	locs := armRE.FindAllStringSubmatchIndex(dispatch, -1)
	for i, l := range locs {
		body := dispatch[l[1]:]
		if i+1 < len(locs) {
			body = dispatch[l[1]:locs[i+1][0]]
		}
		for _, c := range strings.Split(dispatch[l[2]:l[3]], " | ") {
			arms[c] = body
		}
	}
	unknown := regexp.MustCompile(`unknown command input: want ([^"]*)"`).FindStringSubmatch(dispatch)
	if unknown == nil {
		t.Fatal("action.yml's dispatch has no error for an unknown command")
	}
	root, _ := newRoot(IO{Getenv: func(string) string { return "" }})
	want := map[string]bool{"reconcile": true, "status": true}
	for _, kind := range kinds.All() {
		f, _ := kinds.FaceOf(kind)
		for _, verb := range f.CLI {
			if !kinds.OnGitHub(kind) || !strings.Contains(verb, " ") {
				continue
			}
			cmd := strings.ReplaceAll(verb, " ", "-")
			want[cmd] = true
			body, ok := arms[cmd]
			if !ok {
				t.Errorf("action.yml's dispatch has no arm for %s (`ghonce %s`, kind %s)", cmd, verb, kind)
				continue
			}
			c, _, err := root.Find(strings.Fields(verb))
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range regexp.MustCompile(`(?:^|[\s(])--([a-z][a-z-]*)`).FindAllStringSubmatch(body, -1) {
				if c.Flags().Lookup(m[1]) == nil {
					t.Errorf("action.yml's %s arm passes --%s, which `ghonce %s` does not take", cmd, m[1], verb)
				}
			}
			if !regexp.MustCompile(`\b` + cmd + `\b`).MatchString(action.Inputs["command"].Description) {
				t.Errorf("action.yml's command input does not list %s", cmd)
			}
			if !regexp.MustCompile(`\b` + cmd + `\b`).MatchString(unknown[1]) {
				t.Errorf("action.yml's unknown-command error does not list %s", cmd)
			}
		}
	}
	for cmd := range arms {
		if !want[cmd] && cmd != "*" {
			t.Errorf("action.yml dispatches %s, which is no kind's verb (Face.CLI) nor reconcile or status", cmd)
		}
	}
}

// A verb is its kind's declaration and nothing more: a verb no hook or
// file of the CLI names ("ticket open", of the issue kind) parses the
// kind's fields, acts once, and finds its artifact on a rerun.
func TestAVerbNeedsOnlyItsKindsFace(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	for i, want := range []string{"created issue", "already done; skipped"} {
		sys, _, errb := w.io("from stdin", nil)
		c := newCmdKind(&cmdutil.Factory{IO: sys}, "issue", "ticket open", nil)
		c.SetArgs([]string{"--task", "T-new", "--repo", testRepo, "-t", "Flaky", "--body-file", "-", "-l", "bug,ci"})
		if err := c.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if !strings.Contains(errb.String(), want) {
			t.Errorf("run %d: stderr %q, want %q", i, errb.String(), want)
		}
	}
	owner, name, _ := strings.Cut(testRepo, "/")
	if is := w.fake.Issues(owner, name); len(is) != 1 || is[0].Title != "Flaky" || !strings.Contains(is[0].Body, "from stdin") {
		t.Fatalf("issues %+v, want one, titled Flaky, with the body from stdin", is)
	}
}

// Every kind's example (Face.Example) on every verb and gh command its
// Face claims, in the example repository (testworld's SeedExamples): the
// first run makes it, the same command again sends no write, and after
// the gh command the kind's verb finds the action done and unchanged (gh's
// command line made the example's action, field for field). Before that,
// the gh command with a word more (a release's assets) or a flag the kind
// does not declare (a release's --generate-notes), or without a field it
// requires (a review's event), is refused, nothing sent.
func TestEveryKindsExampleActsOnceOnItsFronts(t *testing.T) {
	for _, kind := range kinds.All() {
		f, _ := kinds.FaceOf(kind)
		if f.Example == "" || !kinds.OnGitHub(kind) {
			continue
		}
		var fronts [][2]string // {"ghonce" or "gh", verb}
		for _, verb := range f.CLI {
			fronts = append(fronts, [2]string{"ghonce", verb})
		}
		for _, verb := range f.Gh {
			fronts = append(fronts, [2]string{"gh", verb})
		}
		for _, fr := range fronts {
			t.Run(kind+" "+fr[0]+" "+fr[1], func(t *testing.T) {
				t.Parallel()
				w := newCLIWorld(t)
				w.tw.SeedExamples()
				w.env["GHONCE_GH"], w.env["GHONCE_TASK"] = "/nonexistent/gh", "T"
				writes := func() int {
					n := 0
					for _, r := range w.fake.Requests() {
						if r.Method != http.MethodGet {
							n++
						}
					}
					return n
				}
				// cli is verb with the example, under task T, and its result.
				cli := func(verb string) (cliRun, outcome.Result) {
					args := slices.Concat(strings.Fields(verb), shellWords(kinds.ExampleLine(kind, effect.Field.CLIFlag)), []string{"--task", "T", "--repo", testRepo, "--json"})
					r := w.run("", nil, args...)
					var res outcome.Result
					_ = json.Unmarshal([]byte(r.stdout), &res)
					return r, res
				}
				run := func(extra ...string) cliRun {
					if fr[0] == "ghonce" {
						r, _ := cli(fr[1])
						return r
					}
					args := slices.Concat(strings.Fields(fr[1]), shellWords(kinds.ExampleLine(kind, effect.Field.GhFlag)), []string{"-R", testRepo}, extra)
					return w.gh("", nil, args...)
				}
				// Without one of its required fields, the verb is refused as a
				// usage error; gh (which infers some) without one of a field's
				// switches, as gh refuses it. Nothing is sent.
				for _, fl := range f.Fields {
					if !fl.Required || fl.Arg != "" || (fr[0] == "gh" && fl.Switches == nil) {
						continue
					}
					name := fl.CLIFlag()
					if fr[0] == "gh" {
						name = fl.GhFlag()
					}
					words := shellWords(kinds.ExampleLine(kind, map[string]func(effect.Field) string{"ghonce": effect.Field.CLIFlag, "gh": effect.Field.GhFlag}[fr[0]]))
					var left []string
					for i := 0; i < len(words); i++ {
						if _, sw := fl.Switches[strings.TrimPrefix(words[i], "--")]; sw {
							continue
						}
						if words[i] == "--"+name {
							i++ // and its value
							continue
						}
						left = append(left, words[i])
					}
					args := slices.Concat(strings.Fields(fr[1]), left, []string{"--repo", testRepo})
					if fr[0] == "gh" {
						args[len(args)-2] = "-R"
					}
					r := map[string]func(string, map[string]string, ...string) cliRun{"ghonce": w.run, "gh": w.gh}[fr[0]]("", nil, args...)
					if want := map[string]int{"ghonce": failure.ExitUsage, "gh": 1}[fr[0]]; r.code != want || writes() != 0 {
						t.Errorf("%s %s without %s: exit %d, %d writes; want %d, nothing sent\n%s", fr[0], fr[1], fl.Name, r.code, writes(), want, r.stderr)
					}
				}
				if fr[0] == "gh" {
					for _, extra := range [][]string{{"extra-word"}, {"--no-such-flag"}} {
						if r := run(extra...); r.code == 0 || writes() != 0 {
							t.Errorf("gh %s with %s's example and %s: exit %d, %d writes; want a refusal, nothing sent\n%s%s", fr[1], kind, extra, r.code, writes(), r.stdout, r.stderr)
						}
					}
				}
				if r := run(); r.code != 0 || writes() == 0 {
					t.Fatalf("first run: exit %d, %d writes; want it made\n%s%s", r.code, writes(), r.stdout, r.stderr)
				}
				before := writes()
				if r := run(); r.code != 0 || writes() != before {
					t.Fatalf("second run: exit %d, %d writes more; want none\n%s%s", r.code, writes()-before, r.stdout, r.stderr)
				}
				if _, res := cli(f.CLI[0]); res.Outcome != outcome.Skipped || res.Kind != kind || res.PayloadChanged {
					t.Errorf("ghonce %s after %s %s: %+v; want %s skipped, unchanged", f.CLI[0], fr[0], fr[1], res, kind)
				}
			})
		}
	}
}
