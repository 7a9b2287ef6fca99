package reconcile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every Go snippet of docs/contributing/adding-a-kind.md is a verbatim part
// of this package's source, so it compiles, and the page goes stale loudly.
func TestAddingAKindSnippetsAreThePackagesSource(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "docs", "contributing", "adding-a-kind.md"))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	blocks := strings.Split(string(doc), "```go\n")[1:]
	if len(blocks) == 0 {
		t.Fatal("the page has no Go snippet; this test would check nothing")
	}
	for i, b := range blocks {
		code, _, ok := strings.Cut(b, "```")
		if !ok {
			t.Fatalf("snippet %d is not closed", i+1)
		}
		if !strings.Contains(src.String(), code) {
			t.Errorf("snippet %d is not in reconcile's source (stale?):\n%s", i+1, code)
		}
	}
}
