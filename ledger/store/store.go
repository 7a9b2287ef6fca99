// Package store opens a ledger by its location, the one string a user
// gives with --ledger or GHONCE_LEDGER: a file path is a SQLite ledger on
// this machine; a URL names a shared backend. It is the only place that
// knows which backends exist, so the CLI, the MCP server and library users
// choose a backend the same way.
package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/postgres"
	"github.com/ghonce/ghonce/ledger/sqlite"
)

// Options tune Open.
type Options struct {
	// Now is the clock of a backend that keeps time itself (SQLite); nil
	// means time.Now. A shared backend takes time from its server instead.
	Now func() time.Time
}

// Opened is an open ledger and what Open learned on the way.
type Opened struct {
	ledger.Ledger
	// Created is true when this Open created the store: an earlier ledger
	// (and what it knew) may have been lost.
	Created bool
	// Location is where the ledger lives, fit to print: a file's absolute
	// path, or a URL with its password removed.
	Location string
}

// ErrUnsupported is wrapped by Open's error for a URL whose scheme this
// build has no backend for. Callers report it as a usage error.
var ErrUnsupported = errors.New("unsupported ledger location")

// schemeRe matches a location that starts like a URL ("scheme://").
var schemeRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*)://`)

// Scheme returns the URL scheme of location, lower-cased, or "" for a file
// path.
func Scheme(location string) string {
	m := schemeRe.FindStringSubmatch(location)
	if m == nil {
		return ""
	}
	return strings.ToLower(m[1])
}

// keywordDSNRe matches a libpq keyword/value connection string
// ("host=... dbname=..."), which this build does not take: it has no "://",
// and taken as a file path it would create a file named after it.
var keywordDSNRe = regexp.MustCompile(`^\s*(host|hostaddr|port|dbname|user|password|sslmode|service)\s*=`)

// Open opens the ledger at location. A file path opens (and, if missing,
// creates) a SQLite ledger; a postgres:// or postgresql:// URL opens (and
// migrates) a Postgres ledger. A location that looks like a URL is never
// taken as a file path: a scheme with no backend in this build is refused
// with ErrUnsupported, before anything is created, and the error does not
// repeat the location (it may hold a password).
func Open(ctx context.Context, location string, opts Options) (*Opened, error) {
	if location == "" {
		return nil, errors.New("open ledger: location is empty; pass --ledger PATH")
	}
	switch s := Scheme(location); s {
	case "postgres", "postgresql":
		// The Postgres ledger keeps time by the server's clock; opts.Now
		// (the local clock) is not passed on.
		l, err := postgres.Open(ctx, location, postgres.Options{})
		if err != nil {
			return nil, err
		}
		return &Opened{Ledger: l, Created: l.Created(), Location: l.Location()}, nil
	case "":
		if keywordDSNRe.MatchString(location) {
			return nil, fmt.Errorf("open ledger: %w: a keyword/value connection string; write the Postgres ledger as a URL, postgres://USER@HOST:PORT/DATABASE", ErrUnsupported)
		}
		l, err := sqlite.Open(ctx, location, sqlite.Options{Now: opts.Now})
		if err != nil {
			return nil, err
		}
		return &Opened{Ledger: l, Created: l.Created(), Location: l.Path()}, nil
	default:
		return nil, fmt.Errorf("open ledger: %w: %s:// (use a file path for SQLite, or postgres://USER@HOST/DATABASE)", ErrUnsupported, s)
	}
}
