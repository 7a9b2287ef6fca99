package store_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/postgres"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
	"github.com/ghonce/ghonce/ledger/store"
)

func TestOpenFilePathIsSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.db")
	o, err := store.Open(context.Background(), path, store.Options{Create: store.CreateForAction})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if !o.Created || o.Location != path {
		t.Fatalf("Created=%v Location=%q, want true and %q", o.Created, o.Location, path)
	}
}

// A verb that must not create a ledger (status, reconcile, resolve) gets
// ErrNoLedger for a missing one, and nothing appears on disk: not the file,
// its directory, nor SQLite's -wal and -shm.
func TestOpenCreateNeverCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "l.db"), filepath.Join(dir, "sub", "deeper", "l.db")} {
		_, err := store.Open(context.Background(), path, store.Options{})
		if !errors.Is(err, ledger.ErrNoLedger) {
			t.Fatalf("%s: err = %v, want ErrNoLedger", path, err)
		}
		want := "no ledger at " + path + "; `ghonce init` creates one"
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("created %d entries in the directory, want none", len(ents))
	}
	// An empty file (touched by hand, or a crash before the schema) is
	// where a ledger would be: refused and left empty.
	empty := filepath.Join(dir, "empty.db")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Open(context.Background(), empty, store.Options{}); !errors.Is(err, ledger.ErrNoLedger) {
		t.Fatalf("empty file: err = %v, want ErrNoLedger", err)
	}
	if fi, _ := os.Stat(empty); fi.Size() != 0 {
		t.Fatalf("empty file now has %d bytes", fi.Size())
	}
}

// The store records how it was created, and only a ledger this Open made
// for an action cannot vouch for the past.
func TestOpenRecordsOrigin(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		create      store.Create
		origin      string
		cannotVouch bool
	}{
		{store.CreateForInit, ledger.OriginInit, false},
		{store.CreateForAction, ledger.OriginAction, true},
	} {
		t.Run(tc.origin, func(t *testing.T) {
			path := filepath.Join(dir, tc.origin+".db")
			o, err := store.Open(ctx, path, store.Options{Create: tc.create, CreatedBy: "ghonce test"})
			if err != nil {
				t.Fatal(err)
			}
			if by, err := o.GetMeta(ctx, ledger.MetaCreatedBy); err != nil || by != "ghonce test" {
				t.Fatalf("%s: created_by = %q, %v", path, by, err)
			}
			if o.Origin != tc.origin || o.CannotVouch() != tc.cannotVouch {
				t.Fatalf("%s: Origin=%q CannotVouch=%v, want %q %v", path, o.Origin, o.CannotVouch(), tc.origin, tc.cannotVouch)
			}
			if at, err := o.GetMeta(ctx, ledger.MetaCreatedAt); err != nil || at == "" {
				t.Fatalf("%s: created_at = %q, %v", path, at, err)
			}
			o.Close()
			// Opened again, by any verb: it exists, keeps its origin and is
			// established from now on.
			for _, c := range []store.Create{store.CreateNever, store.CreateForAction, store.CreateForInit} {
				o, err := store.Open(ctx, path, store.Options{Create: c})
				if err != nil {
					t.Fatal(err)
				}
				if o.Created || o.Origin != tc.origin || o.CannotVouch() {
					t.Fatalf("%s reopened: Created=%v Origin=%q CannotVouch=%v", path, o.Created, o.Origin, o.CannotVouch())
				}
				o.Close()
			}
		})
	}
}

// A URL is never a file path: an unsupported scheme is refused, nothing is
// created in the working directory, and the password is not repeated.
func TestOpenUnsupportedSchemeCreatesNothing(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	for _, loc := range []string{"mysql://u:s3cret@h/db", "FTP://u:s3cret@h/x", "redis+tls://u:s3cret@h"} {
		_, err := store.Open(context.Background(), loc, store.Options{})
		if !errors.Is(err, store.ErrUnsupported) {
			t.Fatalf("%s: err = %v, want ErrUnsupported", loc, err)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("%s: error repeats the password: %v", loc, err)
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Fatalf("created %d files in the working directory", len(ents))
	}
}

func TestScheme(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/l.db": "", "l.db": "", "C:/x": "", "postgres://h/db": "postgres",
		"PostgreSQL://h": "postgresql", "./a://b": "",
	} {
		if got := store.Scheme(in); got != want {
			t.Errorf("Scheme(%q) = %q, want %q", in, got, want)
		}
	}
}

// A Postgres URL opens the Postgres ledger; Location drops the password.
func TestOpenPostgres(t *testing.T) {
	loc := pgtest.Schema(t)
	u, _ := url.Parse(loc)
	u.User = url.UserPassword(u.User.Username(), "s3cret")
	// Trust auth ignores the password; it must still never be shown.
	o, err := store.Open(context.Background(), u.String(), store.Options{Create: store.CreateForAction})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if !o.Created || strings.Contains(o.Location, "s3cret") || !strings.HasPrefix(o.Location, "postgres://") {
		t.Fatalf("Created=%v Location=%q, want true and a URL without the password", o.Created, o.Location)
	}
	if _, ok := o.Ledger.(*postgres.Ledger); !ok {
		t.Fatalf("ledger is %T, want *postgres.Ledger", o.Ledger)
	}
}

// A keyword/value DSN is refused, not taken as a file name.
func TestOpenKeywordDSNRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, dsn := range []string{"host=db password=s3cret dbname=x", "application_name=bot password=s3cret host=db", "connect_timeout=5 host=db user=u password='s3cret'"} {
		_, err := store.Open(context.Background(), dsn, store.Options{})
		if !errors.Is(err, store.ErrUnsupported) || strings.Contains(err.Error(), "s3cret") {
			t.Fatalf("%q: err = %v, want ErrUnsupported without the password", dsn, err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("created %d files", len(ents))
	}
}

// A read-only verb on a Postgres location with no ghonce tables is told
// there is no ledger, and nothing is created: not the schema, not a table.
// The ledger `ghonce init` makes records its origin, as SQLite's does.
func TestOpenPostgresNeverCreates(t *testing.T) {
	ctx := context.Background()
	loc := pgtest.Schema(t)
	u, _ := url.Parse(loc)
	schema := u.Query().Get("search_path")
	if _, err := store.Open(ctx, loc, store.Options{}); !errors.Is(err, ledger.ErrNoLedger) || !strings.Contains(err.Error(), "ghonce init") {
		t.Fatalf("CreateNever on an empty schema: %v, want ErrNoLedger with a hint", err)
	}
	conn, err := pgx.Connect(ctx, os.Getenv("GHONCE_TEST_POSTGRES"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n); err != nil || n != 0 {
		t.Fatalf("schema %s exists after a CreateNever open (%d, %v); nothing may be created", schema, n, err)
	}
	o, err := store.Open(ctx, loc, store.Options{Create: store.CreateForInit, CreatedBy: "ghonce test"})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Created || o.Origin != ledger.OriginInit || o.CannotVouch() {
		t.Fatalf("init: Created=%v Origin=%q CannotVouch=%v, want true, init, false", o.Created, o.Origin, o.CannotVouch())
	}
	o.Close()
	o, err = store.Open(ctx, loc, store.Options{})
	if err != nil {
		t.Fatalf("CreateNever on the ledger init made: %v", err)
	}
	defer o.Close()
	if o.Created || o.Origin != ledger.OriginInit {
		t.Fatalf("reopen: Created=%v Origin=%q, want false, init", o.Created, o.Origin)
	}
}

// Open's errors are a library's: they say "open ledger" once, name the
// ledger and what is wrong, and never a flag (a library caller has none;
// the CLI adds its own hint). A caller that wraps them in its own words
// does not repeat "open ledger".
func TestOpenErrorsAreTheLibrarys(t *testing.T) {
	dir := t.TempDir()
	notLedger := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notLedger, []byte("not a database, just some text long enough to look like a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, loc := range []string{"", "  ", "file:ledger.db?mode=ro", "host=db dbname=x", "ftp://x/y", notLedger, filepath.Join(dir, "missing.db")} {
		_, err := store.Open(context.Background(), loc, store.Options{})
		if err == nil {
			t.Fatalf("Open(%q): no error", loc)
		}
		msg := err.Error()
		if strings.Contains(msg, "--") {
			t.Errorf("Open(%q) names a flag: %s", loc, msg)
		}
		if n := strings.Count(msg, "open ledger"); n > 1 {
			t.Errorf("Open(%q) says \"open ledger\" %d times: %s", loc, n, msg)
		}
	}
}
