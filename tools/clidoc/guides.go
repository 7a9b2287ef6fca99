package clidoc

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/internal/mcp"
)

// GuideSections are the generated sections of the guides and of
// action.yml, by page (a path from the repository's root) and section
// name. A section sits between the lines that hold
//
//	generated: NAME (make docs; do not edit)
//	end generated: NAME
//
// in its page's comments (<!-- --> in Markdown, # in YAML).
var GuideSections = map[string][]string{
	"docs/guide/mcp.md":            {mcp.GuideServerTools},
	"docs/guide/mcp-proxy.md":      {mcp.GuideProxyTools},
	"docs/reference/kinds.md":      {"kinds", "guard-writes"},
	"action.yml":                   {"action-command", "action-inputs", "action-env", "action-dispatch"},
	"docs/guide/github-actions.md": {"action-input-table", "action-permissions"},
	"docs/guide/audit.md":          {audit.GuideKinds},
}

// Guides returns the guides with generated sections (GuideSections) as
// rendered today, read from under root: path to content.
func Guides(root string) (map[string][]byte, error) {
	tables, err := mcp.GuideTables(context.Background())
	if err != nil {
		return nil, err
	}
	more, err := kindSections()
	if err != nil {
		return nil, err
	}
	maps.Copy(tables, more)
	tables[audit.GuideKinds] = audit.GuideTable()
	out := map[string][]byte{}
	for page, names := range GuideSections {
		b, err := os.ReadFile(filepath.Join(root, page))
		if err != nil {
			return nil, fmt.Errorf("read guide: %w", err)
		}
		for _, name := range names {
			if b, err = splice(b, name, tables[name]); err != nil {
				return nil, fmt.Errorf("%s: %w", page, err)
			}
		}
		out[page] = b
	}
	return out, nil
}

// splice replaces the body of page's section name, the lines between its
// markers, with body.
func splice(page []byte, name, body string) ([]byte, error) {
	begin := "generated: " + name + " (make docs; do not edit)"
	end := "end generated: " + name
	i, j := bytes.Index(page, []byte(begin)), -1
	if i >= 0 {
		i += bytes.IndexByte(page[i:], '\n') + 1
		j = bytes.Index(page[i:], []byte(end))
	}
	if j < 0 {
		return nil, fmt.Errorf("no section %s: want it between lines that say %q and %q", name, begin, end)
	}
	j = i + bytes.LastIndexByte(page[i:i+j], '\n') + 1
	return slices.Concat(page[:i], []byte(body), page[j:]), nil
}
