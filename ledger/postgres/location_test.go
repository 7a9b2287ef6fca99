package postgres_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/ghonce/ghonce/ledger/postgres"
)

const wantEncode = "percent-encode the password (`@` is `%40`)"

// A URL whose user-info two parsers would read differently is refused
// before any connection, and its error prints nothing of the password.
func TestAmbiguousUserInfoRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, loc, pw string }{
		{"# in the password", "postgres://ghonceu:Secret#1@127.0.0.1/db", "Secret#1"},
		{"@ in the password", "postgres://ghonceu:p@ss@prod@127.0.0.1:5432/db", "p@ss@prod"},
		{"/ in the password", "postgres://ghonceu:pa/Zq7kw9@127.0.0.1/db", "pa/Zq7kw9"},
		{"? in the password", "postgresql://ghonceu:pa?Zq7kw9@127.0.0.1/db", "pa?Zq7kw9"},
		{"# in the password parameter", "postgres://127.0.0.1/db?password=pa#Zq7kw9", "pa#Zq7kw9"},
		{"% in the password", "postgres://ghonceu:100%pure@127.0.0.1/db", "100%pure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			l, err := postgres.Open(ctx, tc.loc, postgres.Options{})
			cancel()
			if err == nil {
				l.Close()
				t.Errorf("%s: Open succeeded", tc.loc)
				return
			}
			msg := err.Error()
			if !errors.Is(err, postgres.ErrBadURL) || !strings.Contains(msg, wantEncode) {
				t.Errorf("%s: %q; want ErrBadURL saying %q", tc.loc, msg, wantEncode)
			}
			for _, piece := range pieces(tc.pw) {
				if strings.Contains(msg, piece) {
					t.Errorf("%s: the error prints %q of the password: %s", tc.loc, piece, msg)
				}
			}
			if got := postgres.Redact(tc.loc); strings.Contains(got, "127.0.0.1") || strings.Contains(got, "ss") {
				t.Errorf("Redact(%s) = %q: it prints a URL it cannot read", tc.loc, got)
			}
		})
	}
}

// pieces are the password's substrings of four or more characters past
// its first (the user name shares none).
func pieces(pw string) []string {
	var out []string
	for i := 1; i+4 <= len(pw); i++ {
		out = append(out, pw[i:i+4])
	}
	return out
}

// A short or common password is removed by the URL's structure, not as
// text: the rest of the message is left whole.
func TestShortPasswordLeavesTheMessageWhole(t *testing.T) {
	t.Parallel()
	for _, pw := range []string{"a", "postgres", "127", "e"} {
		loc := "postgres://postgres:" + pw + "@127.0.0.1:1/test?sslmode=disable"
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := postgres.Open(ctx, loc, postgres.Options{})
		cancel()
		want := "open ledger postgres://postgres@127.0.0.1:1/test?sslmode=disable: cannot reach the Postgres server"
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "xxxxx") {
			t.Errorf("password %q: %v; want it to start %q, unmangled", pw, err, want)
		}
	}
}

// The password the server receives is the one the URL spells, decoded
// once by the same parse that made the location ghonce prints.
func TestEncodedPasswordReachesTheServer(t *testing.T) {
	t.Parallel()
	const pw = "p@ss#1/?%x"
	got := make(chan string, 1)
	addr := passwordServer(t, got)
	loc := "postgres://ghonceu:p%40ss%231%2F%3F%25x@" + addr + "/test?sslmode=disable"
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := postgres.Open(ctx, loc, postgres.Options{})
	if err == nil {
		t.Fatal("Open succeeded against a server that refuses every login")
	}
	select {
	case p := <-got:
		if p != pw {
			t.Errorf("the server received password %q, want %q", p, pw)
		}
	default:
		t.Fatalf("no password reached the server: %v", err)
	}
	if msg := err.Error(); strings.Contains(msg, "ss#1") || !strings.Contains(msg, "postgres://ghonceu@"+addr+"/test") {
		t.Errorf("error %q: want the location without its password", msg)
	}
}

// passwordServer asks each client for a clear-text password, sends what it
// got on got, and refuses the login.
func passwordServer(t *testing.T, got chan<- string) string {
	return servePG(t, func(c net.Conn, be *pgproto3.Backend) {
		for {
			m, err := be.ReceiveStartupMessage()
			if err != nil {
				return
			}
			if _, ok := m.(*pgproto3.StartupMessage); ok {
				break
			}
			c.Write([]byte("N"))
		}
		be.Send(&pgproto3.AuthenticationCleartextPassword{})
		if err := be.Flush(); err != nil {
			return
		}
		be.SetAuthType(pgproto3.AuthTypeCleartextPassword)
		m, err := be.Receive()
		if err != nil {
			return
		}
		if p, ok := m.(*pgproto3.PasswordMessage); ok {
			select {
			case got <- p.Password:
			default:
			}
		}
		be.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01", Message: `password authentication failed for user "ghonceu"`})
		be.Flush()
	})
}

// A password in the query string is removed by structure whatever it
// holds: a raw `;` (which Go's query parser drops the whole pair for, so
// the password was printed verbatim) or a raw `&` (whose fragments became
// parameter names) is refused as unreadable, naming nothing of it, and a
// parameter named like a password in any case is never printed.
func TestQueryPasswordIsNeverPrinted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		loc, pw string
		bad     bool
	}{
		{"postgres://u@127.0.0.1:1/db?password=Zq;7kw9;xyP&sslmode=disable", "Zq;7kw9;xyP", true},
		{"postgres://u@127.0.0.1:1/db?sslmode=disable&password=Zq;7kw9xyP", "Zq;7kw9xyP", true},
		{"postgres://u@127.0.0.1:1/db?password=Zq7k&w9xy&Pq3m&sslmode=disable", "Zq7k&w9xy&Pq3m", true},
		{"postgres://u@127.0.0.1:1/db?sslmode=disable&password=Zq7k&w9xy", "Zq7k&w9xy", true},
		{"postgres://u@127.0.0.1:1/db?sslpassword=Zq7k;w9xy", "Zq7k;w9xy", true},
		{"postgres://u@127.0.0.1:1/db?PASSWORD=Zq7kw9xyP&sslmode=disable", "Zq7kw9xyP", false},
		{"postgres://u@127.0.0.1:1/db?Password=Zq7kw9xyP", "Zq7kw9xyP", false},
		{"postgres://u@127.0.0.1:1/db?password=Zq7k%3Bw9%26xy&sslmode=disable", "Zq7k;w9&xy", false},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		l, err := postgres.Open(ctx, tc.loc, postgres.Options{})
		cancel()
		if err == nil {
			l.Close()
			t.Errorf("%s: Open succeeded against no server", tc.loc)
			continue
		}
		if tc.bad && (!errors.Is(err, postgres.ErrBadURL) || !strings.Contains(err.Error(), "%3B")) {
			t.Errorf("%s: %v; want ErrBadURL saying how to encode `;` and `&`", tc.loc, err)
		}
		red := postgres.Redact(tc.loc)
		for _, out := range []string{err.Error(), red} {
			for _, piece := range append(pieces(tc.pw), "w9xy", "Pq3m", "xyP") {
				if strings.Contains(out, piece) {
					t.Errorf("%s: %q prints %q of the password", tc.loc, out, piece)
				}
			}
		}
		if !tc.bad && !strings.HasPrefix(red, "postgres://u@127.0.0.1:1/db") {
			t.Errorf("Redact(%s) = %q, want the URL without its password", tc.loc, red)
		}
	}
}
