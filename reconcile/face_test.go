package reconcile_test

import (
	"slices"
	"testing"

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
		f, _ := reconcile.FaceOf(c.kind)
		if got, inPath := f.WireName(c.field); got != c.want || inPath != c.inPath {
			t.Errorf("%s's WireName(%s) = %s, %v; want %s, %v", c.kind, c.field, got, inPath, c.want, c.inPath)
		}
	}
}
