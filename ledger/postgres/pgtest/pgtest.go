// Package pgtest gives tests a Postgres ledger location of their own: a
// fresh schema in the database that GHONCE_TEST_POSTGRES names, dropped when
// the test ends. Without GHONCE_TEST_POSTGRES a test is skipped, loudly,
// except under CI=true, where it fails: CI must never pass by skipping.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvVar names the DSN of the database tests may create schemas in.
const EnvVar = "GHONCE_TEST_POSTGRES"

// DSN returns GHONCE_TEST_POSTGRES, skipping (or, under CI=true, failing)
// the test when it is empty.
func DSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvVar)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is empty under CI=true: the Postgres tests must run in CI (.ci/run sets it)", EnvVar)
		}
		t.Skipf("SKIPPED: Postgres tests need %s=postgres://USER@HOST/DB (make test sets it when Postgres answers on 127.0.0.1:5432)", EnvVar)
	}
	return dsn
}

// Schema returns a ledger location in a new schema that no other test
// uses. The schema does not exist yet (Open creates it); it is dropped, with
// everything in it, when t ends.
func Schema(t testing.TB) string {
	t.Helper()
	loc, drop, err := NewSchema(DSN(t), "ghonce_test_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	})
	return loc
}

// NewSchema is Schema for a caller without a testing.TB (the reliability
// matrix): dsn with search_path set to a new schema's name, prefix and a
// random suffix, and a function that drops the schema.
func NewSchema(dsn, prefix string) (loc string, drop func() error, err error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", nil, fmt.Errorf("%s does not parse as a URL", EnvVar)
	}
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", nil, err
	}
	name := prefix + hex.EncodeToString(b[:])
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String(), func() error { return dropSchema(dsn, name) }, nil
}

// WithParam returns dsn with the query parameter k set to v.
func WithParam(t testing.TB, dsn, k, v string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("%s does not parse as a URL", EnvVar)
	}
	q := u.Query()
	q.Set(k, v)
	u.RawQuery = q.Encode()
	return u.String()
}

func dropSchema(dsn, schema string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("drop schema %s: %w", schema, err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
		return fmt.Errorf("drop schema %s: %w", schema, err)
	}
	return nil
}
