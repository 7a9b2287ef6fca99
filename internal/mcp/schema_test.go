package mcp

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Every argument a guard carries (hands to the engine) is one the schema
// ghonce publishes for that tool lists: a handler never reads an argument
// the model was not offered. (serveGuarded refuses the others at call
// time; this says which guard would have read one.) And every field the
// guard's handler decodes is a carried argument, owner, repo, task or step.
func TestGuardsCarryOnlyWhatTheSchemaLists(t *testing.T) {
	var tools []*sdk.Tool
	if err := json.Unmarshal(ghmcpTools, &tools); err != nil {
		t.Fatal(err)
	}
	decodes := map[string]reflect.Type{
		"create_pull_request": reflect.TypeFor[CreatePullRequestArgs](), "issue_write": reflect.TypeFor[CreateIssueArgs](),
		"create_issue": reflect.TypeFor[CreateIssueArgs](), "add_issue_comment": reflect.TypeFor[AddIssueCommentArgs](),
		"create_branch": reflect.TypeFor[CreateBranchArgs](), "create_or_update_file": reflect.TypeFor[CreateOrUpdateFileArgs](),
	}
	for _, tl := range tools {
		gt, err := guardedTool(tl, false)
		if err != nil {
			t.Fatal(err)
		}
		takes := argNames(gt)
		g := guards[tl.Name]
		for _, c := range g.carries {
			if !takes[c] {
				t.Errorf("%s: the guard carries %q, which the published schema does not list (it lists %v)", tl.Name, c, slices.Sorted(maps.Keys(takes)))
			}
		}
		known := append([]string{"owner", "repo", "task", "step"}, g.carries...)
		for _, f := range jsonFields(decodes[tl.Name]) {
			// create_issue shares issue_write's arguments type; labels
			// never reach it (its schema has none: serveGuarded refuses).
			if !slices.Contains(known, f) && !(tl.Name == "create_issue" && f == "labels") {
				t.Errorf("%s: the handler decodes %q, which the guard does not carry", tl.Name, f)
			}
		}
	}
}

// jsonFields are the JSON names of a struct's fields, embedded ones'
// included.
func jsonFields(t reflect.Type) []string {
	var out []string
	for f := range t.Fields() {
		if f.Anonymous {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		out = append(out, strings.Split(f.Tag.Get("json"), ",")[0])
	}
	return out
}
