// Package postgres keeps the ghonce ledger in a PostgreSQL database, so that
// ghonce processes on many machines (a fleet of agent workers, parallel CI
// jobs) share one record of what each (task, step) did.
//
// The key is the primary key of ghonce_entries, so two claims of one key can
// never both create it; taking over a failed entry or a dead lease happens
// under the entry's row lock. Every time the ledger stores or compares (lease
// ends, created and updated times, history) is read from the server's clock,
// never from the machine running ghonce: machines' clocks disagree, and one
// running ahead would otherwise take over a live lease.
//
// Open runs the embedded migrations once per schema, under an advisory lock,
// so any number of processes can start against a new database at once.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults applied to a location that does not set them itself.
const (
	// DefaultConnectTimeout bounds a connection attempt (URL parameter
	// connect_timeout, in seconds, overrides it). pgx has no limit of its own.
	DefaultConnectTimeout = 10 * time.Second
	// DefaultStatementTimeout is the server-side limit on one statement
	// (URL parameter statement_timeout, in milliseconds, overrides it), so a
	// claim queued behind a stuck session fails with a message instead of
	// hanging the agent.
	DefaultStatementTimeout = 30 * time.Second
	// DefaultMaxConns bounds the pool (URL parameter pool_max_conns
	// overrides it). A CLI run uses one connection; the pool opens none
	// until it is needed.
	DefaultMaxConns = 8
)

// Options tunes Open. The zero value is right for every real use.
type Options struct {
	// MustExist opens an existing ledger but never creates one: a database
	// (or schema) holding no ghonce tables is refused with an error
	// wrapping ledger.ErrNoLedger, and nothing is created in it.
	MustExist bool
	// Origin is recorded (ledger.MetaOrigin) in the transaction that
	// creates the ledger: ledger.OriginInit or ledger.OriginAction (empty
	// means ledger.OriginAction).
	Origin string
	// CreatedBy is recorded with Origin (ledger.MetaCreatedBy) when not empty.
	CreatedBy string

	// Now replaces the server's clock. It exists for tests that must move
	// time (the conformance suite's fake clock); with it, lease expiry
	// depends on the caller's clock, which is exactly what the server's
	// clock avoids. Leave it nil.
	Now func() time.Time
}

// Ledger is a ledger.Ledger kept in PostgreSQL.
type Ledger struct {
	pool     *pgxpool.Pool
	location string // the URL without its password
	schema   string // the schema named by search_path, or "" for the server's default
	created  bool
	fake     func() time.Time
	opts     Options
}

var _ ledger.Ledger = (*Ledger)(nil)

// Open connects to the Postgres ledger at location, a postgres:// URL as
// libpq reads it, and brings its schema up to date, creating the schema
// named by search_path and the ledger's tables if they are missing.
//
// Besides libpq's parameters, pgx's pool_max_conns and
// default_query_exec_mode are understood. Errors never contain the
// password; they say what failed (server unreachable, login refused,
// database missing, TLS required, timeout) and what to do.
func Open(ctx context.Context, location string, opts Options) (*Ledger, error) {
	loc, err := parseLocation(location)
	if err != nil {
		return nil, err
	}
	l := &Ledger{location: loc.display, fake: opts.Now, opts: opts}
	conn, secret := loc.connString()
	cfg, err := pgxpool.ParseConfig(conn)
	switch {
	case err != nil && secret:
		// pgx's text would quote the sslpassword: none of it is shown.
		return nil, fmt.Errorf("open ledger %s: pgx cannot read the URL's connection parameters; check sslmode, sslkey and the other parameters", l.location)
	case err != nil:
		return nil, fmt.Errorf("open ledger %s: the URL does not parse: %w; write it as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...&search_path=SCHEMA]", l.location, err)
	}
	if loc.hasPassword {
		// Given to pgx as a value, never as text inside a URL, so no
		// error of the driver's can quote it; PGPASSWORD and ~/.pgpass
		// apply only when the URL has none.
		cfg.ConnConfig.Password = loc.password
	}
	configure(cfg, loc.u.Query())
	l.schema = firstSchema(cfg.ConnConfig.RuntimeParams["search_path"])
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, l.openErr(err)
	}
	l.pool = pool
	if err := l.setUp(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	return l, nil
}

// configure applies ghonce's defaults where the URL sets nothing.
func configure(cfg *pgxpool.Config, q url.Values) {
	if !q.Has("pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	// No connections are opened ahead: a CLI run opens exactly the one it uses.
	cfg.MinConns = 0
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = DefaultConnectTimeout
	}
	rp := cfg.ConnConfig.RuntimeParams
	if _, ok := rp["statement_timeout"]; !ok {
		rp["statement_timeout"] = fmt.Sprint(DefaultStatementTimeout.Milliseconds())
	}
	if _, ok := rp["application_name"]; !ok {
		// So a DBA sees ghonce's sessions in pg_stat_activity.
		rp["application_name"] = "ghonce"
	}
}

// firstSchema returns the first schema named in a search_path value, or ""
// if there is none or it is "$user".
func firstSchema(searchPath string) string {
	first, _, _ := strings.Cut(searchPath, ",")
	first = strings.TrimSpace(first)
	if len(first) >= 2 && first[0] == '"' && first[len(first)-1] == '"' {
		return strings.ReplaceAll(first[1:len(first)-1], `""`, `"`)
	}
	if first == "$user" {
		return ""
	}
	return strings.ToLower(first)
}

// Location returns the ledger's URL without its password.
func (l *Ledger) Location() string { return l.location }

// Created reports whether this Open created the ledger's tables: the schema
// held no ledger before. Of several processes opening a new ledger at once,
// exactly one sees true.
func (l *Ledger) Created() bool { return l.created }

// Close closes every connection of the pool.
func (l *Ledger) Close() error {
	l.pool.Close()
	return nil
}

// Pool returns the connection pool, for tests and tools that need to look
// at the tables directly.
func (l *Ledger) Pool() *pgxpool.Pool { return l.pool }

// setUp checks the schema version and migrates when it is behind. The
// version is read without a lock first: a ledger that is up to date (every
// run but the first) costs one query.
func (l *Ledger) setUp(ctx context.Context) error {
	v, err := l.version(ctx, l.pool)
	if err != nil {
		return l.openErr(err)
	}
	switch {
	case v > SchemaVersion:
		return l.newerSchema(v)
	case v == SchemaVersion:
		return nil
	case v == 0 && l.opts.MustExist:
		where := "database"
		if l.schema != "" {
			where = "schema " + l.schema
		}
		return fmt.Errorf("%w at %s (the %s holds no ghonce tables); `ghonce init` creates one (or check the ledger's location)", ledger.ErrNoLedger, l.location, where)
	}
	return l.migrate(ctx)
}

type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// version returns the schema version the ledger's tables are at, 0 if there
// are none.
func (l *Ledger) version(ctx context.Context, q querier) (int, error) {
	var v int
	err := q.QueryRow(ctx, "SELECT coalesce(max(version), 0) FROM ghonce_schema").Scan(&v)
	var pe *pgconn.PgError
	if errors.As(err, &pe) && pe.Code == "42P01" { // undefined_table
		return 0, nil
	}
	return v, err
}

func (l *Ledger) newerSchema(v int) error {
	return fmt.Errorf("open ledger %s: %w (schema version %d, this ghonce knows up to %d); upgrade ghonce", l.location, ledger.ErrNewerSchema, v, SchemaVersion)
}

// migrate applies the missing migrations in one transaction, under a
// transaction-scoped advisory lock on the schema's name: of several
// processes that start at once, one migrates and the others wait for it and
// then find nothing to do. DDL is transactional in Postgres, so a failed
// migration leaves nothing behind.
func (l *Ledger) migrate(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	tx, err := l.pool.Begin(ctx)
	if err != nil {
		return l.openErr(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1, hashtext(coalesce(nullif($2, ''), current_schema())))", int32(advisoryClass), l.schema); err != nil {
		return l.openErr(err)
	}
	if l.schema != "" {
		// Create the schema only when it is missing: CREATE SCHEMA IF NOT
		// EXISTS needs the CREATE privilege on the database even when the
		// schema exists, and a DBA may have made it for a user without it.
		var exists bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", l.schema).Scan(&exists); err != nil {
			return l.openErr(err)
		}
		if !exists {
			if _, err := tx.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{l.schema}.Sanitize()); err != nil {
				return l.migrateErr(0, "create schema "+l.schema, err)
			}
		}
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS ghonce_schema (
		version    integer     NOT NULL PRIMARY KEY,
		name       text        NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`); err != nil {
		return l.migrateErr(0, "create ghonce_schema", err)
	}
	v, err := l.version(ctx, tx)
	if err != nil {
		return l.openErr(err)
	}
	if v > SchemaVersion {
		return l.newerSchema(v)
	}
	for _, m := range ms[v:] {
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return l.migrateErr(m.Version, m.Name, err)
		}
		if _, err := tx.Exec(ctx, "INSERT INTO ghonce_schema (version, name) VALUES ($1, $2)", m.Version, m.Name); err != nil {
			return l.migrateErr(m.Version, m.Name, err)
		}
	}
	if v == 0 {
		// The same transaction that makes the ledger says how it was made.
		if err := l.putOrigin(ctx, tx); err != nil {
			return l.migrateErr(SchemaVersion, "record the origin", err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return l.openErr(err)
	}
	l.created = v == 0
	return nil
}

// putOrigin records how and when the ledger was created (ledger.MetaOrigin,
// MetaCreatedAt, MetaCreatedBy), by the server's clock.
func (l *Ledger) putOrigin(ctx context.Context, tx pgx.Tx) error {
	origin := l.opts.Origin
	if origin == "" {
		origin = ledger.OriginAction
	}
	now, err := l.now(ctx, tx)
	if err != nil {
		return err
	}
	for _, kv := range [][2]string{{ledger.MetaOrigin, origin}, {ledger.MetaCreatedAt, now.Format(time.RFC3339Nano)}, {ledger.MetaCreatedBy, l.opts.CreatedBy}} {
		if kv[1] == "" {
			continue
		}
		if _, err := tx.Exec(ctx, `INSERT INTO ghonce_meta (name, value, updated_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`, kv[0], kv[1], now); err != nil {
			return err
		}
	}
	return nil
}

func (l *Ledger) migrateErr(version int, name string, err error) error {
	return fmt.Errorf("migrate ledger %s to schema version %d (%s): %w", l.location, version, name, hint(err))
}

// openErr is an error met while opening the ledger.
func (l *Ledger) openErr(err error) error {
	return fmt.Errorf("open ledger %s: %w", l.location, hint(err))
}

// dbErr is an error met after Open.
func (l *Ledger) dbErr(err error) error {
	if errors.Is(err, ledger.ErrNotFound) || errors.Is(err, ledger.ErrFenced) || errors.Is(err, ledger.ErrBusy) {
		return err
	}
	return fmt.Errorf("ledger %s: %w", l.location, hint(err))
}
