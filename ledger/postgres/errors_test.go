package postgres_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/postgres"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

const secret = "s3cret-pw-Zq"

// withUser returns dsn with its user (and password) replaced.
func withUser(t *testing.T, dsn, user, pw string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, pw)
	return u.String()
}

func withHostPort(t *testing.T, dsn, hostport string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = hostport
	return u.String()
}

func withDB(t *testing.T, dsn, db string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	return u.String()
}

// Each error a user can meet opening the ledger: one line, what to do, the
// password never in it.
func TestOpenErrors(t *testing.T) {
	dsn := pgtest.DSN(t)
	base := withUser(t, dsn, "postgres", secret)
	for _, tt := range []struct {
		name string
		loc  string
		want []string
		is   error
	}{
		{"unreachable", withHostPort(t, base, "127.0.0.1:1"), []string{"cannot reach the Postgres server", "connection refused", "host and port"}, postgres.ErrUnreachable},
		{"database missing", withDB(t, base, "ghonce_no_such_db"), []string{`"ghonce_no_such_db" does not exist`, "createdb"}, nil},
		{"login refused", withUser(t, base, "ghonce_no_such_role", secret), []string{"postgres refused the login", "ghonce_no_such_role"}, nil},
		{"TLS required by the URL", pgtest.WithParam(t, withHostPort(t, base, fakeServer(t, false)), "sslmode", "require"), []string{"does not offer TLS", "sslmode"}, nil},
		{"TLS required by the server", withHostPort(t, base, fakeServer(t, true)), []string{"the server requires TLS", "sslmode=require"}, nil},
		{"not a URL", "postgres://u:" + secret + "@h:notaport/db", []string{"does not parse"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			l, err := postgres.Open(ctx, tt.loc, postgres.Options{})
			if err == nil {
				l.Close()
				t.Fatal("Open succeeded")
			}
			msg := err.Error()
			t.Logf("error: %s", msg)
			if strings.Contains(msg, secret) {
				t.Fatalf("the error prints the password: %s", msg)
			}
			if strings.Contains(msg, "\n") {
				t.Errorf("the error is not one line: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error does not wrap %v", tt.is)
			}
		})
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:" + secret + "@h:5432/db?sslmode=disable": "postgres://u@h:5432/db?sslmode=disable",
		"postgresql://h/db?password=" + secret + "&x=1":         "postgresql://h/db?x=1",
		"postgres://u@h/db":                     "postgres://u@h/db",
		"postgres://h/db?sslpassword=" + secret: "postgres://h/db",
	} {
		if got := postgres.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// fakeServer listens on loopback as a Postgres server without TLS: it
// refuses every SSLRequest, and when requireTLS answers a plain startup as
// a server whose pg_hba.conf has only hostssl lines does. It returns its
// host:port.
func fakeServer(t *testing.T, requireTLS bool) string {
	return servePG(t, func(c net.Conn, be *pgproto3.Backend) {
		for {
			m, err := be.ReceiveStartupMessage()
			if err != nil {
				return
			}
			switch m.(type) {
			case *pgproto3.SSLRequest, *pgproto3.GSSEncRequest:
				c.Write([]byte("N"))
				continue
			}
			if requireTLS {
				be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28000",
					Message: `no pg_hba.conf entry for host "127.0.0.1", user "postgres", database "test", no encryption`})
				be.Flush()
			}
			return
		}
	})
}

// servePG listens on loopback until the test ends and runs serve on each
// connection, as a Postgres backend, for at most 10 seconds. It returns
// its host:port.
func servePG(t *testing.T, serve func(c net.Conn, be *pgproto3.Backend)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				serve(c, pgproto3.NewBackend(c, c))
			}()
		}
	}()
	return ln.Addr().String()
}

// holdRow locks key's entry from another session until the test ends.
func holdRow(t *testing.T, loc, key string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1 FROM ghonce_entries WHERE key = $1 FOR UPDATE", key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx); c.Close(ctx) })
}

func claimParams(key string) ledger.ClaimParams {
	return ledger.ClaimParams{Key: key, Task: "t", Step: "s", Kind: "pr", Repo: "o/r", Target: "main",
		Payload: []byte("{}"), Owner: ledger.Owner{ID: "run-a", Host: "h", PID: 1}, Lease: time.Minute, Why: "test"}
}

// A statement that runs into statement_timeout fails with a message that
// says so, and writes nothing: the entry stays attempting under its fence.
func TestStatementTimeout(t *testing.T) {
	loc := pgtest.Schema(t)
	ctx := context.Background()
	l := openClaimed(t, pgtest.WithParam(t, loc, "statement_timeout", "300"))
	holdRow(t, loc, "k")
	_, err := l.Finish(ctx, ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Done, Outcome: "created", Why: "ok"})
	if err == nil || !strings.Contains(err.Error(), "statement_timeout") || !strings.Contains(err.Error(), "nothing of it was written") {
		t.Fatalf("Finish under a held lock: %v, want a statement_timeout message", err)
	}
	t.Logf("error: %v", err)
	e, err := l.Get(ctx, "k")
	if err != nil || e.Status != ledger.Attempting || e.Fence != 1 {
		t.Fatalf("after the timeout: %+v, %v; want attempting under fence 1", e, err)
	}
}

// The connection is killed (pg_terminate_backend) while Finish waits for a
// row lock: the error says the connection was lost, the entry stays
// attempting, and the next Finish, on a new connection, records the outcome.
func TestConnectionLostMidAction(t *testing.T) {
	loc := pgtest.Schema(t)
	ctx := context.Background()
	l := openClaimed(t, pgtest.WithParam(t, loc, "application_name", "ghonce-victim"))
	admin, err := pgx.Connect(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	holdRow(t, loc, "k")

	done := make(chan error, 1)
	go func() {
		_, err := l.Finish(ctx, ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Done, Outcome: "created", Why: "ok"})
		done <- err
	}()
	// Wait (bounded) until the Finish is blocked on the lock, then kill its
	// backend. Each look is a query that waits on the server, not a sleep.
	var killed bool
	for i := 0; i < 200 && !killed; i++ {
		err := admin.QueryRow(ctx, `SELECT coalesce(bool_or(pg_terminate_backend(pid)), false) FROM pg_stat_activity
			WHERE application_name = 'ghonce-victim' AND wait_event_type = 'Lock'`).Scan(&killed)
		if err != nil {
			t.Fatal(err)
		}
		if !killed {
			if _, err := admin.Exec(ctx, "SELECT pg_sleep(0.01)"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !killed {
		t.Fatal("the Finish never waited on the lock")
	}
	err = <-done
	if !errors.Is(err, postgres.ErrConnectionLost) || !strings.Contains(err.Error(), "run the command again") {
		t.Fatalf("Finish on a killed connection: %v, want ErrConnectionLost with a hint", err)
	}
	t.Logf("error: %v", err)
	e, err := l.Get(ctx, "k")
	if err != nil || e.Status != ledger.Attempting {
		t.Fatalf("after the lost connection: %+v, %v; want attempting", e, err)
	}
}

// Cancelling the context stops a write waiting for a lock.
func TestContextCancel(t *testing.T) {
	loc := pgtest.Schema(t)
	ctx := context.Background()
	l := openClaimed(t, loc)
	holdRow(t, loc, "k")
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	err := l.Renew(cctx, "k", 1, time.Minute)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Renew past its deadline: %v, want context.DeadlineExceeded", err)
	}
}
