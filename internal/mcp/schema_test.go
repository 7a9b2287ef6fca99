package mcp

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/kinds"
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

// Every tool's Face.Tools names only what is there: a Body tool's schema
// lists body, a Methods tool's lists method, and What's {names} are the
// kind's fields or the result's number, id and sha.
func TestToolsDataNamesWhatIsThere(t *testing.T) {
	var tools []*sdk.Tool
	if err := json.Unmarshal(ghmcpTools, &tools); err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		g, ok := guards[tl.Name]
		if !ok {
			continue
		}
		gt, err := guardedTool(tl, false)
		if err != nil {
			t.Fatal(err)
		}
		takes := argNames(gt)
		if g.Body && !takes["body"] || g.Methods != nil && !takes["method"] {
			t.Errorf("%s: Body %v, Methods %v, but its schema lists %v", tl.Name, g.Body, g.Methods, slices.Sorted(maps.Keys(takes)))
		}
		if (g.Body || g.Methods != nil) != (g.Pass != "") {
			t.Errorf("%s: Pass %q names what goes upstream, and only when some call does", tl.Name, g.Pass)
		}
		types := kinds.FieldTypes(g.kind)
		for _, m := range whatRE.FindAllStringSubmatch(g.What, -1) {
			if _, field := types[m[1]]; !field && m[1] != "result.number" && m[1] != "result.id" && m[1] != "result.sha" {
				t.Errorf("%s: What %q names %s, which is no field of %s nor the result's number, id or sha", tl.Name, g.What, m[1], g.kind)
			}
		}
	}
}
