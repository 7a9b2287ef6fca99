package cli

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/internal/mcp"
	"github.com/ghonce/ghonce/kinds"
)

// Every kind is on every front its Face claims, and every
// acting verb, guarded gh command and MCP tool is some kind's: a kind cannot be added
// to one front and forgotten on another. (The go-github transport routes
// from the Face itself; guard's TestEveryDeclaredWriteIsGuarded checks
// it.)
func TestEveryKindIsOnTheFrontsItClaims(t *testing.T) {
	root, _ := newRoot(IO{Getenv: func(string) string { return "" }})
	claimedCLI, claimedGh, claimedMCP := map[string]bool{}, map[string]bool{}, map[string]bool{}
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
		for _, verb := range f.Gh {
			claimedGh[verb] = true
			if got, _, ok := guardedGh(strings.Fields(verb)); !ok || got != verb {
				t.Errorf("%s claims `gh %s`, which the shim hands to the real gh", kind, verb)
			}
		}
		for _, tool := range f.MCP {
			claimedMCP[tool] = true
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
	for _, verb := range slices.Sorted(maps.Values(ghVerbs)) {
		if !claimedGh[verb] {
			t.Errorf("the shim guards `gh %s`, which no kind's Face claims", verb)
		}
	}
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
