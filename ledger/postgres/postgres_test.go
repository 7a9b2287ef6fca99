package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/ledgertest"
	"github.com/ghonce/ghonce/ledger/postgres"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
	"github.com/jackc/pgx/v5"
)

// Without Options.Now every time comes from the server: a claim's times lie
// within the server's clock readings around it, and a lease shorter than a
// round trip is dead by the next claim, whatever this machine's clock says.
func TestServerClock(t *testing.T) {
	loc := pgtest.Schema(t)
	ctx := context.Background()
	l := open(t, loc)
	serverNow := func() time.Time {
		var now time.Time
		if err := l.Pool().QueryRow(ctx, "SELECT clock_timestamp()").Scan(&now); err != nil {
			t.Fatal(err)
		}
		return now
	}
	before := serverNow()
	p := claimParams("k")
	p.Lease = time.Microsecond
	c, err := l.Claim(ctx, p)
	if err != nil || c.State != ledger.ClaimCreated {
		t.Fatalf("Claim: %+v, %v", c, err)
	}
	after := serverNow()
	if c.Entry.CreatedAt.Before(before.Truncate(time.Microsecond)) || c.Entry.CreatedAt.After(after) {
		t.Errorf("CreatedAt %v is not within the server's clock %v .. %v", c.Entry.CreatedAt, before, after)
	}
	if got := c.Entry.LeaseUntil.Sub(c.Entry.CreatedAt); got != time.Microsecond {
		t.Errorf("lease = %v, want 1µs", got)
	}
	pb := claimParams("k")
	pb.Owner.ID = "run-b"
	c, err = l.Claim(ctx, pb)
	if err != nil || c.State != ledger.ClaimAcquired {
		t.Fatalf("claim after a 1µs lease: %+v, %v; want acquired", c, err)
	}
	pc := claimParams("k")
	pc.Owner.ID = "run-c"
	if c, err = l.Claim(ctx, pc); err != nil || c.State != ledger.ClaimBusy {
		t.Fatalf("claim under b's one-minute lease: %+v, %v; want busy", c, err)
	}
	if err := l.Renew(ctx, "k", 2, time.Hour); err != nil {
		t.Fatal(err)
	}
	e, _ := l.Get(ctx, "k")
	if d := e.LeaseUntil.Sub(serverNow()); d < 59*time.Minute || d > time.Hour {
		t.Errorf("renewed lease ends %v from the server's now, want about 1h", d)
	}
}

// Sixteen processes opening a new schema at once: each succeeds, exactly one
// created the ledger, and the migration ran once.
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	loc := pgtest.Schema(t)
	ctx := context.Background()
	created := ledgertest.ConcurrentOpens(t, 16, func() (*postgres.Ledger, error) {
		return postgres.Open(ctx, loc, postgres.Options{})
	})
	if created != 1 {
		t.Errorf("%d Opens report Created, want 1", created)
	}
	l := open(t, loc)
	var n int
	if err := l.Pool().QueryRow(ctx, "SELECT count(*) FROM ghonce_schema").Scan(&n); err != nil || n != postgres.SchemaVersion {
		t.Errorf("ghonce_schema has %d rows (%v), want %d", n, err, postgres.SchemaVersion)
	}
	if l.Created() {
		t.Error("a later Open reports Created")
	}
}

// A ledger newer than this ghonce is refused, and left as it is.
func TestNewerSchemaRefused(t *testing.T) {
	loc := pgtest.Schema(t)
	ctx := context.Background()
	if _, err := open(t, loc).Pool().Exec(ctx, "INSERT INTO ghonce_schema (version, name) VALUES ($1, 'from the future')", postgres.SchemaVersion+1); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.Open(ctx, loc, postgres.Options{})
	if err == nil || !errors.Is(err, ledger.ErrNewerSchema) {
		t.Fatalf("Open of a newer ledger: %v, want ErrNewerSchema", err)
	}
}

// A user with no rights beyond a schema the DBA made for it can run the
// ledger there: nothing needs superuser or CREATE on the database.
func TestUnprivilegedUserInOwnSchema(t *testing.T) {
	dsn := pgtest.DSN(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	// Cleanups run last-registered first: the drops below, then this.
	t.Cleanup(func() { admin.Close(ctx) })
	var b [4]byte
	rand.Read(b[:])
	role := "ghonce_test_role_" + hex.EncodeToString(b[:])
	schema := "ghonce_test_own_" + hex.EncodeToString(b[:])
	id, sid := pgx.Identifier{role}.Sanitize(), pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		"CREATE ROLE " + id + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE",
		"REVOKE CREATE ON SCHEMA public FROM " + id,
		"CREATE SCHEMA " + sid + " AUTHORIZATION " + id,
	} {
		if _, err := admin.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	t.Cleanup(func() {
		for _, q := range []string{"DROP SCHEMA IF EXISTS " + sid + " CASCADE", "DROP ROLE IF EXISTS " + id} {
			if _, err := admin.Exec(ctx, q); err != nil {
				t.Errorf("clean up: %s: %v", q, err)
			}
		}
	})
	loc := pgtest.WithParam(t, withUser(t, dsn, role, ""), "search_path", schema)
	l := open(t, loc)
	if c, err := l.Claim(ctx, claimParams("k")); err != nil || c.State != ledger.ClaimCreated {
		t.Fatalf("Claim: %+v, %v", c, err)
	}
	var n int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM "+sid+".ghonce_entries").Scan(&n); err != nil || n != 1 {
		t.Fatalf("entries in %s: %d, %v", schema, n, err)
	}
}

// Retention as docs/guide/postgres.md tells a DBA: deleting an old done entry takes its
// history with it, and a later claim of the key starts afresh.
func TestRetentionDelete(t *testing.T) {
	loc := pgtest.Schema(t)
	ctx := context.Background()
	l := open(t, loc)
	c, err := l.Claim(ctx, claimParams("k"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Finish(ctx, ledger.FinishParams{Key: "k", Fence: c.Entry.Fence, Status: ledger.Done, Outcome: "created", Why: "ok"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Pool().Exec(ctx, "UPDATE ghonce_transitions SET why = 'rewritten'"); err == nil {
		t.Fatal("a transition was updated: the history is not append-only")
	}
	tag, err := l.Pool().Exec(ctx, "DELETE FROM ghonce_entries WHERE status = 'done' AND updated_at < now() + interval '1 second'")
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("retention delete: %v, %v", tag, err)
	}
	if h, err := l.History(ctx, "k"); err != nil || len(h) != 0 {
		t.Fatalf("history after delete: %d transitions, %v", len(h), err)
	}
	if c, err := l.Claim(ctx, claimParams("k")); err != nil || c.State != ledger.ClaimCreated {
		t.Fatalf("claim after delete: %+v, %v", c, err)
	}
}

// open opens the ledger at loc on the server's clock; it is closed when t
// ends.
func open(t testing.TB, loc string) *postgres.Ledger {
	t.Helper()
	l, err := postgres.Open(context.Background(), loc, postgres.Options{})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// openClaimed opens the ledger at loc and claims key "k" in it.
func openClaimed(t *testing.T, loc string) *postgres.Ledger {
	t.Helper()
	l := open(t, loc)
	if _, err := l.Claim(context.Background(), claimParams("k")); err != nil {
		t.Fatal(err)
	}
	return l
}
