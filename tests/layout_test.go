// Package tests holds ghonce's laboratory: the reliability matrix, the
// benchmarks, the harness and worlds tests run in, and the test kits. This
// file holds the tree to that split.
package tests

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/ghonce/ghonce"

// testKitName is a package name that says "test kit".
var testKitName = regexp.MustCompile(`(?i)(^test|test$|testing$|testkit|harness|world$|^bench|^fakes?$|^fixtures?$)`)

// TestInternalHoldsProductOnly: every package under internal/ is imported
// by a product package's non-test code (anything outside tests/ and tools/,
// the adapters' modules included), and none is named like a test kit. A
// package only tests use belongs under tests/; a generator under tools/.
func TestInternalHoldsProductOnly(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	internal := map[string]bool{} // import path → has Go files
	productImporters := map[string][]string{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			base := d.Name()
			if rel != "." && (strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_") || base == "testdata" || base == "node_modules" || rel == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		pkg := path.Join(module, path.Dir(rel))
		if strings.HasPrefix(rel, "internal/") {
			internal[pkg] = true
		}
		if strings.HasSuffix(p, "_test.go") || strings.HasPrefix(rel, "tests/") || strings.HasPrefix(rel, "tools/") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if ip != pkg && strings.HasPrefix(ip, module+"/internal/") {
				productImporters[ip] = append(productImporters[ip], pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(internal) == 0 {
		t.Fatalf("no Go package under %s/internal", root)
	}
	var names []string
	for p := range internal {
		names = append(names, p)
	}
	sort.Strings(names)
	for _, p := range names {
		rel := strings.TrimPrefix(p, module+"/")
		if testKitName.MatchString(path.Base(p)) {
			t.Errorf("%s is named like a test kit: the laboratory lives under tests/", rel)
		}
		if len(productImporters[p]) == 0 {
			t.Errorf("%s is imported by no product code (only by tests, tools or nothing): move it under tests/ (a test kit) or tools/ (a generator)", rel)
		}
	}
}

// TestAdaptersImportNoInternalPackage: an adapter is a module of its own
// and builds on the public packages alone, tests included; internal/
// promises it nothing.
func TestAdaptersImportNoInternalPackage(t *testing.T) {
	err := filepath.WalkDir(filepath.Join("..", "adapters"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, im := range f.Imports {
			if ip, _ := strconv.Unquote(im.Path.Value); strings.HasPrefix(ip, module+"/internal/") {
				t.Errorf("%s imports %s: an adapter may use only ghonce's public packages", p, ip)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
