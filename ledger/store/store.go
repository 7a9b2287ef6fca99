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
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	ghledger "github.com/ghonce/ghonce/ledger/github"
	"github.com/ghonce/ghonce/ledger/postgres"
	"github.com/ghonce/ghonce/ledger/sqlite"
)

// Create says whether Open may create a missing ledger, and on whose
// behalf. Every backend implements it: CreateNever creates nothing (no
// file, directory, database or table) and fails with ledger.ErrNoLedger.
type Create int

const (
	// CreateNever: the ledger must exist. For the verbs that only look at
	// or settle what the ledger holds (status, reconcile, resolve): a
	// typo in --ledger is an error, never an empty, "established" ledger.
	CreateNever Create = iota
	// CreateForAction: a missing ledger is created for the action about to
	// run, recorded as ledger.OriginAction.
	CreateForAction
	// CreateForInit: `ghonce init` creates the ledger ahead of any work,
	// recorded as ledger.OriginInit.
	CreateForInit
)

// Options tune Open.
type Options struct {
	// Create: whether a missing ledger is created (zero: CreateNever).
	Create Create
	// CreatedBy names the program creating a new ledger, recorded as
	// ledger.MetaCreatedBy (never a secret).
	CreatedBy string

	// Now is the clock of a backend that keeps time itself (SQLite); nil
	// means time.Now. A shared backend takes time from its server instead.
	Now func() time.Time

	// ReadOnlyOK, with CreateNever, opens a SQLite ledger this process can
	// read but not write (file or directory permissions, a read-only
	// mount) read-only instead of failing: for the verbs that only look
	// (status). Opened.ReadOnly says so; its writes fail.
	ReadOnlyOK bool

	// Repo is the repository the command acts on (OWNER/NAME), where the
	// location "github" keeps the ledger; "" when the command names none.
	Repo string
	// GitHub returns the client a repository ledger ("github",
	// github://OWNER/REPO) sends its requests through: the command's own,
	// so the ledger's writes are paced with its other writes. Nil refuses
	// those locations.
	GitHub func(ctx context.Context) (*ghcheck.Client, error)
	// PerRepo, for the location "github", keeps each claim in the
	// repository its action names (ledger.ClaimParams.Repo), Repo being
	// only the default for an action that names none (a front that acts
	// on many repositories: ghonce mcp). github://OWNER/REPO keeps every
	// claim in that one repository all the same.
	PerRepo bool
	// Logf, for a repository ledger, reports a claim ref it skips because
	// it holds no claim of its own key (ghledger.Options.Logf).
	Logf func(format string, args ...any)
}

// origin is what a backend records for a ledger it creates, and whether it
// may create one at all.
func (o Options) origin() (origin string, mustExist bool) {
	switch o.Create {
	case CreateForInit:
		return ledger.OriginInit, false
	case CreateForAction:
		return ledger.OriginAction, false
	}
	return "", true
}

// Opened is an open ledger and what Open learned on the way.
type Opened struct {
	ledger.Ledger
	// Created is true when this Open created the store.
	Created bool
	// Origin is how the store was created (ledger.OriginInit or
	// ledger.OriginAction), as the store itself records it; empty for a
	// ledger older than that record.
	Origin string
	// Location is where the ledger lives, fit to print: a file's absolute
	// path, or a URL with its password removed.
	Location string
	// ReadOnly is true when Options.ReadOnlyOK opened the ledger
	// read-only because this process cannot write it.
	ReadOnly bool
	// InRepository is true for a ledger that lives in a GitHub repository:
	// anyone who can push there can write it, so a done entry is not
	// proof on its own (reconcile.Config.DoneNeedsProof).
	InRepository bool
}

// IsGitHub reports whether location is a repository ledger: "github" (the
// repository each action writes to) or github://OWNER/REPO.
func IsGitHub(location string) bool {
	return strings.EqualFold(strings.TrimSpace(location), ghledger.Scheme) || Scheme(location) == ghledger.Scheme
}

// openGitHub opens a repository ledger.
func openGitHub(ctx context.Context, location string, opts Options) (*Opened, error) {
	repo := opts.Repo
	if Scheme(location) == ghledger.Scheme {
		repo = location[len(ghledger.Scheme)+3:]
	} else if opts.PerRepo {
		return openPerRepo(ctx, opts)
	}
	r, err := ghcheck.ParseRepo(strings.TrimSuffix(repo, "/"))
	if strings.TrimSpace(repo) == "" {
		return nil, &badLocation{&effect.AdviceError{
			Err:    errors.New(`open ledger: the ledger "github" lives in the repository the command acts on, and it names none`),
			Option: effect.Option{Name: "repo", Value: "OWNER/REPO"}, Set: true,
			Step: "%s (in Actions GITHUB_REPOSITORY is read), or give the ledger as github://OWNER/REPO",
		}}
	}
	if err != nil {
		return nil, &badLocation{fmt.Errorf("open ledger %s: %w: write it github://OWNER/REPO", location, err)}
	}
	if opts.GitHub == nil {
		return nil, fmt.Errorf("open ledger: %w: a repository ledger needs a GitHub client here", ErrUnsupported)
	}
	c, err := opts.GitHub(ctx)
	if err != nil {
		return nil, err
	}
	l, err := ghledger.Open(ghledger.Options{Client: c, Repo: r, Logf: opts.Logf})
	if err != nil {
		return nil, err
	}
	if opts.Create == CreateForInit {
		if _, err := l.PutMeta(ctx, ledger.MetaOrigin, ledger.OriginInit, true); err != nil {
			return nil, err
		}
		if _, err := l.PutMeta(ctx, ledger.MetaCreatedBy, opts.CreatedBy, true); err != nil {
			return nil, err
		}
	}
	if opts.Create != CreateForInit {
		// Only `ghonce init` says how a ledger came to be; a repository
		// ledger vouches for the past whatever its origin (CannotVouch),
		// so an action spends no round trip reading it.
		return &Opened{Ledger: l, Location: l.Location(), InRepository: true}, nil
	}
	o, err := opened(ctx, l, false, l.Location())
	if err != nil {
		return nil, err
	}
	o.InRepository = true
	return o, nil
}

// openPerRepo opens the ledger "github" of a front that acts on many
// repositories (Options.PerRepo).
func openPerRepo(ctx context.Context, opts Options) (*Opened, error) {
	if opts.Repo != "" {
		if _, err := ghcheck.ParseRepo(strings.TrimSpace(opts.Repo)); err != nil {
			return nil, &badLocation{fmt.Errorf("open ledger github: %w", err)}
		}
	}
	if opts.GitHub == nil {
		return nil, fmt.Errorf("open ledger: %w: a repository ledger needs a GitHub client here", ErrUnsupported)
	}
	c, err := opts.GitHub(ctx)
	if err != nil {
		return nil, err
	}
	loc := ghledger.Scheme + " (each action's repository)"
	if opts.Repo != "" {
		loc = ghledger.Scheme + " (each action's repository; " + opts.Repo + " for an action that names none)"
	}
	return &Opened{Ledger: newPerRepo(c, opts.Repo, opts.Logf), Location: loc, InRepository: true}, nil
}

// ErrUnsupported is wrapped by Open's error for a URL whose scheme this
// build has no backend for. Callers report it as a usage error.
var ErrUnsupported = errors.New("unsupported ledger location")

// ErrBadLocation is wrapped by Open's error for a location that is bad
// input: empty, a SQLite URI ("file:ledger.db?mode=ro", which would be
// taken as a file named so in the working directory), or a Postgres URL
// that cannot be read one way only (postgres.ErrBadURL). Nothing was
// created. Callers report it as a usage error.
var ErrBadLocation = errors.New("bad ledger location")

// badLocation is an error that is both ErrBadLocation and its cause.
type badLocation struct{ err error }

func (e *badLocation) Error() string   { return e.err.Error() }
func (e *badLocation) Unwrap() []error { return []error{e.err, ErrBadLocation} }

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
// ("host=... dbname=...", its keywords in any order), which this build does
// not take: it has no "://", and taken as a file path it would create a
// file named after it, password and all, and print that name.
var keywordDSNRe = regexp.MustCompile(`(^|\s)(host|hostaddr|port|dbname|user|password|passfile|sslmode|sslpassword|service|application_name|connect_timeout|options|target_session_attrs)\s*=`)

// Open opens the ledger at location, creating a missing one only as
// opts.Create allows: a file path is a SQLite ledger; a postgres:// or
// postgresql:// URL is a Postgres ledger (its schema migrated on open). A
// location that looks like a URL is never
// taken as a file path: a scheme with no backend in this build is refused
// with ErrUnsupported, before anything is created, and the error does not
// repeat the location (it may hold a password).
func Open(ctx context.Context, location string, opts Options) (*Opened, error) {
	switch {
	case strings.TrimSpace(location) == "":
		return nil, &badLocation{errors.New("open ledger: the location is empty: want a file path or a postgres:// URL (ledger.DefaultPath is ghonce's default)")}
	case len(location) >= 5 && strings.EqualFold(location[:5], "file:"):
		return nil, &badLocation{errors.New("open ledger: a SQLite URI (file:...) is not taken; give the file's path, e.g. ./ledger.db")}
	}
	if IsGitHub(location) {
		return openGitHub(ctx, location, opts)
	}
	switch s := Scheme(location); s {
	case "postgres", "postgresql":
		// The Postgres ledger keeps time by the server's clock; opts.Now
		// (the local clock) is not passed on.
		origin, mustExist := opts.origin()
		l, err := postgres.Open(ctx, location, postgres.Options{MustExist: mustExist, Origin: origin, CreatedBy: opts.CreatedBy})
		if errors.Is(err, postgres.ErrBadURL) {
			return nil, &badLocation{err}
		}
		if err != nil {
			return nil, err
		}
		return opened(ctx, l, l.Created(), l.Location())
	case "":
		if keywordDSNRe.MatchString(location) {
			return nil, fmt.Errorf("open ledger: %w: a keyword/value connection string; write the Postgres ledger as a URL, postgres://USER@HOST:PORT/DATABASE", ErrUnsupported)
		}
		origin, mustExist := opts.origin()
		l, err := sqlite.Open(ctx, location, sqlite.Options{Now: opts.Now, MustExist: mustExist, Origin: origin, CreatedBy: opts.CreatedBy})
		if err != nil && opts.ReadOnlyOK && mustExist && sqlite.CannotWrite(err) {
			ro, rerr := sqlite.Open(ctx, location, sqlite.Options{Now: opts.Now, ReadOnly: true})
			if rerr != nil {
				// SQLite reads a WAL ledger only beside its -shm file,
				// which a user who cannot write the directory cannot make.
				return nil, &readOnlyError{path: absPath(location), err: err}
			}
			o, oerr := opened(ctx, ro, false, ro.Path())
			if oerr == nil {
				o.ReadOnly = true
			}
			return o, oerr
		}
		if err != nil {
			return nil, err
		}
		return opened(ctx, l, l.Created(), l.Path())
	default:
		return nil, fmt.Errorf("open ledger: %w: %s:// (use a file path for SQLite, postgres://USER@HOST/DATABASE, or github://OWNER/REPO)", ErrUnsupported, s)
	}
}

// readOnlyError is a SQLite ledger this user can neither write nor read
// read-only.
type readOnlyError struct {
	path string
	err  error
}

func (e *readOnlyError) Error() string {
	return fmt.Sprintf("open ledger %s: this user can write neither the ledger nor its directory (SQLite creates %s-shm even to read): run as its owner, or grant write there", e.path, e.path)
}
func (e *readOnlyError) Unwrap() error { return e.err }

func absPath(location string) string {
	if abs, err := filepath.Abs(location); err == nil {
		return abs
	}
	return location
}

// opened reads the store's origin and wraps it.
func opened(ctx context.Context, l ledger.Ledger, created bool, location string) (*Opened, error) {
	origin, err := l.GetMeta(ctx, ledger.MetaOrigin)
	if err != nil && !errors.Is(err, ledger.ErrNotFound) {
		l.Close()
		return nil, fmt.Errorf("open ledger %s: %w", location, err)
	}
	return &Opened{Ledger: l, Created: created, Origin: origin, Location: location}, nil
}

// CannotVouch reports whether the ledger cannot vouch for the past: an
// action it has no entry for may still have been performed, recorded in an
// earlier ledger that was lost. That holds for a ledger this Open created
// for an action. A ledger made by `ghonce init` (whenever it was opened) or
// one that an earlier run created and has kept since vouches for what ran
// against it; one older than the origin record is taken as established, as
// before.
func (o *Opened) CannotVouch() bool {
	if o.InRepository {
		// Nothing of it is lost with a runner's disk: it vouches like a
		// ledger that has kept every run since it began. Pruning never
		// removes a guarded command's claims (docs/guide/repository-ledger.md).
		return false
	}
	return o.Created && o.Origin != ledger.OriginInit
}
