package store_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/ledger/postgres"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
	"github.com/ghonce/ghonce/ledger/store"
)

func TestOpenFilePathIsSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.db")
	o, err := store.Open(context.Background(), path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if !o.Created || o.Location != path {
		t.Fatalf("Created=%v Location=%q, want true and %q", o.Created, o.Location, path)
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
	o, err := store.Open(context.Background(), u.String(), store.Options{})
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
	_, err := store.Open(context.Background(), "host=db password=s3cret dbname=x", store.Options{})
	if !errors.Is(err, store.ErrUnsupported) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("err = %v, want ErrUnsupported without the password", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("created %d files", len(ents))
	}
}
