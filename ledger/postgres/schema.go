package postgres

import (
	"embed"

	"github.com/ghonce/ghonce/ledger/internal/migrations"
)

// advisoryClass is the first key of the advisory lock that migrations take
// (the second is a hash of the schema's name): "ghon" in ASCII.
const advisoryClass = 0x67686f6e

// SchemaVersion is the newest schema this package knows, kept as the highest
// version in ghonce_schema. A ledger with a higher version was written by a
// newer ghonce and is refused; a lower one is migrated on Open.
const SchemaVersion = 2

// migrationFiles holds one file per schema version (see package migrations).
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

func loadMigrations() ([]migrations.Migration, error) {
	return migrations.Load(migrationFiles, "migrations", SchemaVersion)
}
