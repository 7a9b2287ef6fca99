// Package migrations reads a ledger backend's embedded schema migrations:
// one file per schema version, named NNNN_what.sql, where migration N takes a
// ledger from version N-1 to N. Files are never edited once released; a
// change is a new file.
package migrations

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one schema step.
type Migration struct {
	Version int
	Name    string // the file's base name
	SQL     string
}

// Load returns the migrations in dir of fsys in order, checking that they
// are numbered 1..want without gaps.
func Load(fsys fs.FS, dir string, want int) ([]Migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var ms []Migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		if !ok {
			return nil, fmt.Errorf("read migration %s: name is not NNNN_what.sql", name)
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: version %q is not a number", name, num)
		}
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		ms = append(ms, Migration{Version: v, Name: base, SQL: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	for i, m := range ms {
		if m.Version != i+1 {
			return nil, fmt.Errorf("read migrations: %s has version %d, want %d", m.Name, m.Version, i+1)
		}
	}
	if len(ms) != want {
		return nil, fmt.Errorf("read migrations: found %d, the schema version is %d", len(ms), want)
	}
	return ms, nil
}
