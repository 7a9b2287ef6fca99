package sqlite

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// ApplicationID is written to the header of every ghonce ledger (PRAGMA
// application_id) so that the file names its owner: "ghon" in ASCII.
const ApplicationID = 0x67686f6e

// SchemaVersion is the newest schema this package knows, kept in the header
// as PRAGMA user_version. A ledger with a higher version was written by a
// newer ghonce and is refused; a lower one is migrated on Open.
const SchemaVersion = 2

// migrationFiles holds one file per schema version, named NNNN_what.sql.
// Migration N takes a ledger from version N-1 to N. Files are never edited
// once released; a change is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in order, checking that they
// are numbered 1..SchemaVersion without gaps.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var ms []migration
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		if !ok {
			return nil, fmt.Errorf("read migration %s: name is not NNNN_what.sql", name)
		}
		v, err := strconv.Atoi(num)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: version %q is not a number", name, num)
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("read migrations: %s has version %d, want %d", m.name, m.version, i+1)
		}
	}
	if len(ms) != SchemaVersion {
		return nil, fmt.Errorf("read migrations: found %d, SchemaVersion is %d", len(ms), SchemaVersion)
	}
	return ms, nil
}
