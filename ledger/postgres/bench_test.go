package postgres_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/ledgertest"
	"github.com/ghonce/ghonce/ledger/postgres"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
)

func benchLedger(b *testing.B) *postgres.Ledger { return open(b, pgtest.Schema(b)) }

var benchClaim = ledgertest.BenchClaim

// BenchmarkClaimFinish is one side effect's ledger cost: a claim that
// creates the entry (a read, then one INSERT ... ON CONFLICT statement) and
// a finish that marks it done (one transaction). Two commits, each one WAL
// flush on the server.
func BenchmarkClaimFinish(b *testing.B) {
	l := benchLedger(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if err := ledgertest.BenchAction(ctx, l, benchClaim("key-"+strconv.Itoa(i)), true); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(2, "commits/op")
}

// BenchmarkClaimMarkFinish is a fresh action that creates, with the
// sending mark before the create (one more commit, which replaces the
// lease renewal the engine made at that point before the mark existed).
func BenchmarkClaimMarkFinish(b *testing.B) {
	l := benchLedger(b)
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		if err := ledgertest.BenchCreate(ctx, l, benchClaim("key-"+strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(3, "commits/op")
}

// BenchmarkClaimDone is the cost of a re-run finding its step done: one
// read, no lock, no commit.
func BenchmarkClaimDone(b *testing.B) {
	l := benchLedger(b)
	ctx := context.Background()
	if err := ledgertest.BenchAction(ctx, l, benchClaim("k"), false); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		c, err := l.Claim(ctx, benchClaim("k"))
		if err != nil || c.State != ledger.ClaimDone {
			b.Fatalf("claim: %v, %v", c, err)
		}
	}
}

// BenchmarkOpen is what a CLI run pays before its first claim: parse the
// URL, connect (one connection, no pool warm-up), read the schema version.
func BenchmarkOpen(b *testing.B) {
	loc := pgtest.Schema(b)
	ctx := context.Background()
	open(b, loc) // migrated once, outside the loop
	for b.Loop() {
		l, err := postgres.Open(ctx, loc, postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		l.Close()
	}
}
