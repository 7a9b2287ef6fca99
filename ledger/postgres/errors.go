package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/ghonce/ghonce/ledger"
	"github.com/jackc/pgx/v5/pgconn"
)

// ErrUnreachable is wrapped by the error for a server that could not be
// reached (refused, no route, timed out, name not found).
var ErrUnreachable = errors.New("cannot reach the Postgres server")

// ErrConnectionLost is wrapped by the error for a connection that broke
// while a statement was under way: whether that write took effect is
// unknown. An entry it would have finished stays attempting, and the next
// run settles it.
var ErrConnectionLost = errors.New("lost the connection to the Postgres ledger")

// hintError puts a one-line explanation in front of the driver's error and
// keeps it for errors.As.
type hintError struct {
	msg string
	err error
}

func (e *hintError) Error() string { return e.msg }
func (e *hintError) Unwrap() error { return e.err }

// hint turns the driver errors a user can meet into one-line messages that
// say what to do. The driver's error stays reachable with errors.As.
func hint(err error) error {
	if err == nil {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pgHint(pe, err)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if strings.Contains(err.Error(), "server refused TLS connection") {
		return &hintError{"the server does not offer TLS, which the URL requires (sslmode=require or stricter): enable TLS there or, on a trusted network only, sslmode=disable", err}
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		var ne net.Error
		var de *net.DNSError
		var oe *net.OpError
		switch {
		case errors.As(err, &de):
			return &hintError{fmt.Sprintf("%s: host %q not found; check the host in the ledger URL", ErrUnreachable, de.Name), errors.Join(ErrUnreachable, ledger.ErrUnavailable, err)}
		case errors.As(err, &oe) || errors.As(err, &ne):
			return &hintError{fmt.Sprintf("%s: %s; check that it is running and that the host and port in the ledger URL are right", ErrUnreachable, lastPart(err)), errors.Join(ErrUnreachable, ledger.ErrUnavailable, err)}
		}
		return &hintError{fmt.Sprintf("connect to the Postgres ledger: %s", lastPart(err)), err}
	}
	if pgconn.Timeout(err) {
		return err
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || isNetErr(err) || strings.Contains(err.Error(), "conn closed") {
		return lost(err)
	}
	return err
}

func isNetErr(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe)
}

func lost(err error) error {
	return &hintError{fmt.Sprintf("%s: %s; whether the last write took effect is unknown: the entry stays attempting, run the command again", ErrConnectionLost, lastPart(err)), errors.Join(ErrConnectionLost, ledger.ErrUnavailable, err)}
}

// pgHint explains a server's error.
func pgHint(pe *pgconn.PgError, err error) error {
	msg := func(format string, args ...any) error {
		return &hintError{fmt.Sprintf(format, args...), err}
	}
	switch pe.Code {
	case "28P01": // invalid_password
		return msg("postgres refused the login: %s; check the user and password in the ledger URL (or PGPASSWORD, ~/.pgpass)", pe.Message)
	case "28000": // invalid_authorization_specification
		if strings.Contains(pe.Message, "SSL off") || strings.Contains(pe.Message, "no encryption") {
			return msg("the server requires TLS: %s; add sslmode=require (or verify-full) to the ledger URL", pe.Message)
		}
		return msg("postgres refused the login: %s; check the user in the ledger URL, or ask the DBA to allow it in pg_hba.conf", pe.Message)
	case "3D000": // invalid_catalog_name
		return msg("%s; create it (createdb) or fix the database name in the ledger URL", pe.Message)
	case "57014": // query_canceled: statement_timeout, or a cancel request
		return msg("postgres cancelled a ledger statement: %s; nothing of it was written: end a session holding its rows, or raise statement_timeout (ms) in the URL", pe.Message)
	case "55P03": // lock_not_available: lock_timeout
		return msg("postgres gave up waiting for a lock: %s; nothing of it was written; run again", pe.Message)
	case "57P01", "57P02", "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
		return lost(err)
	case "42501": // insufficient_privilege
		return msg("postgres denied the ledger a permission: %s; grant its user USAGE and CREATE on its schema (docs/guide/postgres.md: What a DBA needs to know)", pe.Message)
	case "25006": // read_only_sql_transaction
		return msg("the server is read-only (a standby?): %s; point the ledger URL at the primary", pe.Message)
	case "53300": // too_many_connections
		return msg("postgres has no free connection: %s; lower pool_max_conns in the ledger URL or raise max_connections", pe.Message)
	}
	if strings.HasPrefix(pe.Code, "08") { // connection_exception
		return lost(err)
	}
	return err
}

// lastPart is the innermost cause of a chain of "a: b: c" messages, which
// for pgx's connect errors is the useful part ("connection refused").
func lastPart(err error) string {
	s := err.Error()
	if i := strings.LastIndex(s, ": "); i >= 0 && i+2 < len(s) {
		return s[i+2:]
	}
	return s
}
