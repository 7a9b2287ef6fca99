package mcp

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every argument a guard carries (hands to the engine) is one the schema
// ghonce publishes for that tool lists: a handler never reads an argument
// the model was not offered. (serveGuarded refuses the others at call
// time; this says which guard would have read one.) The handler decodes
// nothing else: it reads the kind's fields by the names it carries.
func TestGuardsCarryOnlyWhatTheSchemaLists(t *testing.T) {
	var tools []*sdk.Tool
	if err := json.Unmarshal(ghmcpTools, &tools); err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		gt, err := guardedTool(tl, false)
		if err != nil {
			t.Fatal(err)
		}
		takes := argNames(gt)
		g := guards[tl.Name]
		for _, c := range g.carries {
			// create_issue is issue_write's kind without labels: its
			// schema has none, and serveGuarded refuses them.
			if !takes[c] && !(tl.Name == "create_issue" && c == "labels") {
				t.Errorf("%s: the guard carries %q, which the published schema does not list (it lists %v)", tl.Name, c, slices.Sorted(maps.Keys(takes)))
			}
		}
	}
}
