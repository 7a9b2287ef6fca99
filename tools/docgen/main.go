// Command docgen writes the generated part of the documentation: the CLI
// reference in docs/reference/cli, one page per command, and the generated
// sections of the guides and action.yml: the MCP tool tables, the table of
// kinds, the Action's dispatch (tools/clidoc). `make docs` runs it; run it
// after changing a command, a flag, a help text or a kind, and commit what
// it writes.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ghonce/ghonce/tools/clidoc"
)

func main() {
	out := flag.String("out", "docs/reference/cli", "directory for the CLI reference (its .md files are replaced)")
	root := flag.String("root", ".", "the repository, whose guides' generated sections (clidoc.GuideSections) are rewritten")
	flag.Parse()
	err := write(*out)
	if err == nil {
		err = writeGuides(*root)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docgen: "+err.Error())
		os.Exit(1)
	}
}

// write replaces dir's Markdown pages with the rendered ones, so a page of
// a removed command goes too.
func write(dir string) error {
	pages, err := clidoc.Pages()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("make reference dir: %w", err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		return fmt.Errorf("list reference dir: %w", err)
	}
	for _, p := range old {
		if _, keep := pages[filepath.Base(p)]; !keep {
			if err := os.Remove(p); err != nil {
				return fmt.Errorf("remove stale page: %w", err)
			}
		}
	}
	for name, b := range pages {
		if strings.ContainsAny(name, `/\`) {
			return fmt.Errorf("write page %q: not a plain file name", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("write page: %w", err)
		}
	}
	fmt.Printf("docgen: wrote %d pages to %s\n", len(pages), dir)
	return nil
}

// writeGuides rewrites the guides' generated sections.
func writeGuides(root string) error {
	pages, err := clidoc.Guides(root)
	if err != nil {
		return err
	}
	for p, b := range pages {
		if err := os.WriteFile(filepath.Join(root, p), b, 0o644); err != nil {
			return fmt.Errorf("write guide: %w", err)
		}
	}
	fmt.Printf("docgen: wrote the generated sections of %d guides\n", len(pages))
	return nil
}
