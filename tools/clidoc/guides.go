package clidoc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/internal/mcp"
)

// GuideSections are the generated sections of the guides, by page (a path
// from the repository's root) and section name. A section sits between
//
//	<!-- generated: NAME (make docs; do not edit) -->
//	<!-- end generated: NAME -->
//
// lines in its page.
var GuideSections = map[string][]string{
	"docs/guide/mcp.md":       {mcp.GuideServerTools},
	"docs/guide/mcp-proxy.md": {mcp.GuideProxyTools},
	"docs/guide/audit.md":     {audit.GuideKinds},
}

// Guides returns the guides with generated sections (GuideSections) as
// rendered today, read from under root: path to content.
func Guides(root string) (map[string][]byte, error) {
	tables, err := mcp.GuideTables(context.Background())
	if err != nil {
		return nil, err
	}
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

// splice replaces the body of page's section name with body.
func splice(page []byte, name, body string) ([]byte, error) {
	begin := []byte("<!-- generated: " + name + " (make docs; do not edit) -->\n")
	end := []byte("<!-- end generated: " + name + " -->\n")
	i := bytes.Index(page, begin)
	j := bytes.Index(page, end)
	if i < 0 || j < i {
		return nil, fmt.Errorf("no section %s: want it between the lines %q and %q", name, bytes.TrimSpace(begin), bytes.TrimSpace(end))
	}
	var b bytes.Buffer
	b.Write(page[:i+len(begin)])
	b.WriteString(body)
	b.Write(page[j:])
	return b.Bytes(), nil
}
