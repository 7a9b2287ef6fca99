package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/kinds"
	_ "github.com/ghonce/ghonce/offgithub" // registers the kinds off GitHub
	_ "github.com/ghonce/ghonce/reconcile"
)

// maxPlaces is what adding a REST kind may cost (issue 38 §2,
// docs/contributing/adding-a-kind.md): hand-written files of code, tests
// and configuration that name it. A guide that names a kind (a recipe, a
// caveat) is the kind's choice, not a place it must edit: it is listed,
// not counted, since the generated tables already list every kind.
const maxPlaces = 10

// housesOwn are the kinds the house was built around. The tests of the
// engine, the ledger and every front use them as their examples, so they
// are named all over the tree by design. Every kind added since is held to
// maxPlaces; this list is closed (a new kind does not join it).
var housesOwn = []string{"pr", "issue", "comment", "branch", "file", "close", "branch-delete", "comment-delete"}

// TestAddingAKindTouchesAtMostTenPlaces counts, for every kind on GitHub
// the house was not built around, the hand-written files that name it: its
// Go type, the GitHub methods its narrow interface declares, the CLI and gh
// commands, Action command and MCP tools only it has, and its name in a
// list of kinds. Generated files and generated sections (make docs) are
// not counted: they are written from the kind's declaration. Its log
// lists each kind's places and the guides that name it:
// `go test ./tests -run Places -v`. It approximates removing the kind and
// mending what breaks (adding-a-kind.md), which a path or a field name
// alone can escape; it catches what grows most, lists and rows of kinds.
func TestAddingAKindTouchesAtMostTenPlaces(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	files := handWritten(t, root)
	all := kinds.All()
	checked, counted := 0, map[string][]string{}
	for _, name := range all {
		k, _ := kinds.Lookup(name)
		if !k.OnGitHub || slices.Contains(housesOwn, name) {
			continue
		}
		checked++
		names, local := namesOf(t, root, k, all)
		var places, prose []string
		for _, f := range files {
			m := names.FindString(f.text)
			if m == "" && strings.HasPrefix(f.path, "reconcile/") {
				m = local.FindString(f.text)
			}
			if m == "" && !listsKind(f.text, name, all) && !ownsFile(f.path, name) {
				continue
			}
			if strings.HasSuffix(f.path, ".md") {
				prose = append(prose, f.path)
			} else {
				places = append(places, f.path)
			}
			if testing.Verbose() {
				t.Logf("  %s %s: %q", name, f.path, m)
			}
		}
		counted[name] = places
		t.Logf("%s: %d places: %s; and %d guides that choose to name it: %s", name, len(places), strings.Join(places, " "), len(prose), strings.Join(prose, " "))
		if len(places) > maxPlaces {
			t.Errorf("kind %s is named in %d hand-written files, more than %d: derive what lists it from its declaration (adding-a-kind.md): %s",
				name, len(places), maxPlaces, strings.Join(places, " "))
		}
	}
	checkTheGuide(t, root, counted)
	if checked == 0 {
		t.Fatal("no kind was counted: the registry or housesOwn is wrong")
	}
}

// notPlaces are files that name kinds and are no place to add one: the
// generated table of kinds, the guide to adding one (its worked example is
// a release) and this test.
var notPlaces = []string{"docs/reference/kinds.md", "docs/contributing/adding-a-kind.md", "tests/places_test.go"}

type source struct{ path, text string }

// generatedSection is a section make docs writes, between its markers.
var generatedSection = regexp.MustCompile(`(?s)generated: ([a-z0-9-]+) \(make docs; do not edit\).*?end generated: ([a-z0-9-]+)`)

// handWritten returns the tree's Go, Markdown, YAML and shell files with
// generated files and sections left out.
func handWritten(t *testing.T, root string) []source {
	t.Helper()
	var out []source
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || rel == "bin" || rel == "docs/reference/cli") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".go", ".md", ".yml", ".yaml", ".sh", ".ts", ".mjs":
		default:
			if d.Name() != "Makefile" {
				return nil
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		text := string(b)
		if strings.HasPrefix(text, "// Code generated") || slices.Contains(notPlaces, rel) {
			return nil
		}
		out = append(out, source{rel, generatedSection.ReplaceAllString(text, "")})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// namesOf is a pattern matching what names kind k alone: its Go type, the
// methods of the interfaces its own file declares, and the commands and
// tools no other kind shares (a command quoted, as argv or after ghonce;
// an Action command). local matches its type unqualified, which names it
// only in package reconcile: elsewhere it is another package's type of the
// same name (ghcheck.Review, fakegithub.Release).
func namesOf(t *testing.T, root string, k kinds.Kind, all []string) (names, local *regexp.Regexp) {
	t.Helper()
	typ := reflect.TypeOf(k.New()).Elem().Name()
	local = regexp.MustCompile(`(^|[^.\w])` + typ + `\{|\) ` + typ + `\)`)
	alts := []string{`\breconcile\.` + typ + `\b`}
	own := filepath.Join(root, "reconcile", "kind_"+strings.ReplaceAll(k.Name, "-", "_")+".go")
	f, err := parser.ParseFile(token.NewFileSet(), own, nil, 0)
	if err != nil {
		t.Fatalf("kind %s: its own file: %v", k.Name, err)
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if it, ok := n.(*ast.InterfaceType); ok {
			for _, m := range it.Methods.List {
				for _, id := range m.Names {
					alts = append(alts, `\b`+id.Name+`\b`)
				}
			}
		}
		return true
	})
	others := map[string]bool{}
	for _, other := range all {
		if o, _ := kinds.Lookup(other); other != k.Name {
			for _, c := range slices.Concat(o.Face.CLI, o.Face.Gh, o.Face.MCP) {
				others[c] = true
			}
		}
	}
	for _, c := range slices.Concat(k.Face.CLI, k.Face.Gh, k.Face.MCP) {
		if others[c] {
			continue
		}
		words := strings.Fields(c)
		alts = append(alts, regexp.QuoteMeta(`"`+strings.Join(words, `", "`)+`"`), regexp.QuoteMeta(`"`+c+`"`),
			`\bghonce `+regexp.QuoteMeta(c)+`\b`, `\b`+regexp.QuoteMeta(strings.Join(words, "-"))+`\b`)
	}
	sort.Strings(alts)
	return regexp.MustCompile(strings.Join(slices.Compact(alts), "|")), local
}

// keyLabels are files named labels that serve the ledger's key labels
// (ghonce labels describe|prune), which every kind uses, not the labels kind.
var keyLabels = []string{"internal/cli/labels.go", "internal/fakegithub/labels.go"}

// ownsFile reports whether path is a file named after kind name
// (ghcheck/releases.go, guard/labels_test.go).
func ownsFile(path, name string) bool {
	base := strings.ToLower(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	base = strings.TrimSuffix(strings.ReplaceAll(base, "_", ""), "test")
	n := strings.ReplaceAll(name, "-", "")
	return filepath.Ext(path) == ".go" && !slices.Contains(keyLabels, path) && (base == n || base == n+"s" || base == "kind"+n || strings.TrimSuffix(base, "gh") == n)
}

// kindWord ends the text before a kind's name given as a kind
// (Kinds: []string{"labels"}, g.Kind != "release", a table's name:).
var kindWord = regexp.MustCompile(`((?i:kinds?)\b[^"\n]{0,16}|case |\bname: )$`)

// listsKind reports whether text lists kinds by hand with name among
// them: a line whose quoted words are mostly kinds' names, two or more,
// distinct, or one naming it as a kind (Kinds: []string{"labels"}, case "release":).
func listsKind(text, name string, all []string) bool {
	q := `"` + name + `"`
	for _, line := range strings.Split(text, "\n") {
		i := strings.Index(line, q)
		if i < 0 {
			continue
		}
		if kindWord.MatchString(line[:i]) {
			return true
		}
		words, n := slices.Compact(slices.Sorted(slices.Values(quoted.FindAllString(line, -1)))), 0
		for _, w := range words {
			if slices.Contains(all, strings.Trim(w, `"`)) {
				n++
			}
		}
		if n >= 2 && 2*n > len(words) && !strings.Contains(line, `"--`) { // not a command line
			return true
		}
	}
	return false
}

var quoted = regexp.MustCompile(`"[^"]*"`)

// checkTheGuide holds adding-a-kind.md's table of the places a release
// touches, and the count it says in words, to release's places as counted.
func checkTheGuide(t *testing.T, root string, counted map[string][]string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "contributing", "adding-a-kind.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(b), "| # | place | what |")
	table, _, _ = strings.Cut(table, "\n\n")
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| \\d+ \\| `([^`]+)`").FindAllStringSubmatch(table, -1) {
		listed = append(listed, m[1])
	}
	got := slices.Sorted(slices.Values(counted["release"]))
	if !slices.Equal(slices.Sorted(slices.Values(listed)), got) {
		t.Errorf("adding-a-kind.md's table lists %v; release's places are %v", listed, got)
	}
	words := []string{"No", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine", "Ten"}
	if n := len(listed); n >= len(words) || !strings.Contains(string(b), "\n"+words[n]+" places") {
		t.Errorf("adding-a-kind.md does not say its table's count, %d, as \"%s places\"", n, words[min(n, len(words)-1)])
	}
}
