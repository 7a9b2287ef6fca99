package reconcile_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/reconcile"
)

// What a kind's REST write carries, and what it calls each field, come
// from the kind's JSON tags and its Face alone.
func TestFaceNamesTheWireFields(t *testing.T) {
	for kind, want := range map[string][]string{
		"pr":      {"base", "body", "draft", "head", "title"},
		"issue":   {"body", "labels", "title"},
		"comment": {"body"},
		"branch":  {"ref", "sha"},
		"file":    {"branch", "content", "message", "sha"},
		"exec":    nil,
	} {
		if got := reconcile.BodyFields(kind); !slices.Equal(got, want) {
			t.Errorf("BodyFields(%s) = %v, want %v", kind, got, want)
		}
	}
	for _, c := range []struct {
		kind, field, want string
		inPath            bool
	}{
		{"comment", "number", "number", true},
		{"file", "path", "path", true},
		{"file", "replaces", "sha", false},
		{"branch", "name", "ref", false},
		{"pr", "base", "base", false},
	} {
		f, _ := kinds.FaceOf(c.kind)
		if got, inPath := f.WireName(c.field); got != c.want || inPath != c.inPath {
			t.Errorf("%s's WireName(%s) = %s, %v; want %s, %v", c.kind, c.field, got, inPath, c.want, c.inPath)
		}
	}
}

// A kind that a front carries names every one of its fields on the fronts
// (Face.Fields), once each, and names no field it does not have: a front
// built from the declaration then takes all of the kind and nothing else.
func TestFaceFieldsAreTheKindsFields(t *testing.T) {
	for _, kind := range reconcile.Kinds() {
		f, _ := kinds.FaceOf(kind)
		if len(f.CLI)+len(f.Gh)+len(f.MCP) == 0 {
			continue
		}
		if f.Does == "" {
			t.Errorf("%s: no Does", kind)
		}
		var names []string
		for _, fl := range f.Fields {
			names = append(names, fl.Name)
		}
		slices.Sort(names)
		var want []string
		for name := range reconcile.Fields(kind) {
			want = append(want, name)
		}
		slices.Sort(want)
		if !slices.Equal(names, want) {
			t.Errorf("%s: Face.Fields name %v, want the kind's fields %v", kind, names, want)
		}
	}
}

// goGithubFieldsCarriedOrRefused fails t unless kind's body fields and the
// ones its Face refuses are every field go-github sends in req, its
// request type for the kind's write: nothing go-github can send goes
// unexamined by the transport (guard), which would pass it unguarded.
func goGithubFieldsCarriedOrRefused(t *testing.T, kind string, req any) {
	t.Helper()
	f, _ := kinds.FaceOf(kind)
	known := append(reconcile.BodyFields(kind), f.Refuses...)
	rt := reflect.TypeOf(req)
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		if !slices.Contains(known, name) {
			t.Errorf("%s: go-github's %s sends %q, which the kind's Face neither carries nor refuses", kind, rt.Name(), name)
		}
	}
	for _, r := range f.Refuses {
		if slices.Contains(reconcile.BodyFields(kind), r) {
			t.Errorf("%s both carries and refuses %q", kind, r)
		}
	}
}

// go-github's request types for writes of kinds without a test file of
// their own (a kind with one holds its row there: review's).
func TestGoGithubsFieldsAreCarriedOrRefused(t *testing.T) {
	for kind, req := range map[string]any{
		"pr":    github.NewPullRequest{},
		"issue": github.IssueRequest{},
		"file":  github.RepositoryContentFileOptions{},
	} {
		goGithubFieldsCarriedOrRefused(t, kind, req)
	}
}
