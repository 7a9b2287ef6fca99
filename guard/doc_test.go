package guard_test

import (
	"os"
	"strings"
	"testing"
)

// The Go snippet of docs/guide/drop-in.md is ExampleNew's drop-in region,
// less its lines marked "test only": it runs whenever the example does.
func TestDropInDocIsExampleNew(t *testing.T) {
	doc, err := os.ReadFile("../docs/guide/drop-in.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "```go\n")
	snippet, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/guide/drop-in.md has no ```go block")
	}
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, region, _ := strings.Cut(string(src), "// drop-in:start\n")
	region, _, ok = strings.Cut(region, "// drop-in:end")
	if !ok {
		t.Fatal("example_test.go has no drop-in region")
	}
	var lines []string
	indent := ""
	for i, l := range strings.Split(strings.TrimRight(region, "\t\n"), "\n") {
		if i == 0 {
			indent = l[:len(l)-len(strings.TrimLeft(l, "\t"))]
		}
		if strings.HasSuffix(l, "// test only") {
			continue
		}
		lines = append(lines, strings.TrimPrefix(l, indent))
	}
	if want := strings.Join(lines, "\n") + "\n"; snippet != want {
		t.Fatalf("docs/guide/drop-in.md's Go snippet differs from ExampleNew's drop-in region:\n--- doc\n%s--- example\n%s", snippet, want)
	}
}
