package sqlite

import (
	"embed"

	"github.com/ghonce/ghonce/ledger/internal/migrations"
)

// ApplicationID is written to the header of every ghonce ledger (PRAGMA
// application_id) so that the file names its owner: "ghon" in ASCII.
const ApplicationID = 0x67686f6e

// SchemaVersion is the newest schema this package knows, kept in the header
// as PRAGMA user_version. A ledger with a higher version was written by a
// newer ghonce and is refused; a lower one is migrated on Open.
const SchemaVersion = 4

// migrationFiles holds one file per schema version, named NNNN_what.sql.
// Migration N takes a ledger from version N-1 to N. Files are never edited
// once released; a change is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// loadMigrations returns the embedded migrations in order, checking that
// they are numbered 1..SchemaVersion without gaps.
func loadMigrations() ([]migrations.Migration, error) {
	return migrations.Load(migrationFiles, "migrations", SchemaVersion)
}
