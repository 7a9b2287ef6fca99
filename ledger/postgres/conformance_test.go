package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/ledgertest"
	"github.com/ghonce/ghonce/ledger/postgres"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
)

// The one conformance suite, against Postgres, each subtest in a fresh
// schema. The suite moves time with its own clock, so the ledger is opened
// with Options.Now; server_clock_test.go covers the server's clock.
func TestConformance(t *testing.T) {
	pgtest.DSN(t) // skip (or fail under CI=true) once, not in every subtest
	ledgertest.Run(t, func(t *testing.T, now func() time.Time) ledger.Ledger {
		dsn := pgtest.Schema(t)
		l, err := postgres.Open(context.Background(), dsn, postgres.Options{Now: now})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return l
	})
}
