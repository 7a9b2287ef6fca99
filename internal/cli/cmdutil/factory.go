// Package cmdutil is what ghonce's programs share, as gh CLI's cmdutil is
// its commands': the Factory that opens the ledger, the GitHub client and
// the engine only when a command asks; the flags several commands read;
// the run of one action (RunAction); the --json envelope, usage errors and
// exit codes; progress. It imports none of the programs.
package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/actions"
	"github.com/ghonce/ghonce/internal/crashpoint"
	"github.com/ghonce/ghonce/internal/secret"
	"github.com/ghonce/ghonce/ledger"
	ghledger "github.com/ghonce/ghonce/ledger/github"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/reconcile"
)

// Factory builds what commands need, lazily, so a command that does not
// use the ledger or GitHub never opens or calls them.
type Factory struct {
	IO IO
	// Version is this build's (package cli's readVersion): what a ledger it creates
	// records of its maker and what its telemetry reports.
	Version string
	// Say, when set, is the front's words for options (the gh shim's);
	// else WordsFor decides.
	Say effect.Words
	// PrintedJSON: the run's one JSON object is out, and a later failure
	// adds none.
	PrintedJSON bool
	// gh is the client github made for ghFor (its arguments), kept so a
	// run that reads GitHub before acting (branch create --from, the gh
	// shim's default base) authenticates once: a GitHub App's handshake
	// is three requests.
	gh    *ghcheck.Client
	ghFor string
	// tel is the run's metrics and traces (observe.go); nil until asked.
	tel *Telemetry
	// minted are the installation tokens a GitHub App minted in this run
	// (mintedToken), which no output may show.
	minted secret.Set
}

// Token returns the GitHub token from GH_TOKEN or GITHUB_TOKEN.
func (f *Factory) Token() (string, error) {
	for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN"} {
		if t := f.IO.Getenv(k); t != "" {
			return t, nil
		}
	}
	return "", &failure.MissingCredentials{Err: errors.New("no GitHub token: set GH_TOKEN or GITHUB_TOKEN (try `ghonce demo` to see ghonce work without one)")}
}

// GitHub returns a client authenticated with the token, or as the GitHub
// App who or the environment configures; repo is the command's --repo, for
// finding the App's installation.
func (f *Factory) GitHub(ctx context.Context, who GitHubFlags, repo RepoFlag) (*ghcheck.Client, error) {
	key := fmt.Sprintf("%q %+v %q", who.TrustAuthors, who.App, repo)
	if f.gh != nil && f.ghFor == key {
		return f.gh, nil
	}
	opts, err := f.githubOptions(ctx, who, repo)
	if err != nil {
		return nil, err
	}
	c, err := newGitHub(opts)
	if err != nil {
		return nil, err
	}
	f.gh, f.ghFor = c, key
	return c, nil
}

// GitHubOn is github with the token's login cached in l (by a fingerprint
// of the token, never the token): only the first run on a ledger spends
// GET /user.
func (f *Factory) GitHubOn(ctx context.Context, who GitHubFlags, repo RepoFlag, l *store.Opened) (*ghcheck.Client, error) {
	c, err := f.GitHub(ctx, who, repo)
	if err != nil {
		return nil, err
	}
	CacheLogin(c, l)
	return c, nil
}

// CacheLogin caches c's login in l, except in a repository ledger: there
// the cache would cost two writes to the repository to save one read, and
// anyone who can push could plant a login in it.
func CacheLogin(c *ghcheck.Client, l *store.Opened) {
	if !l.InRepository {
		c.UseLoginCache(reconcile.LoginCache(l))
	}
}

// ledgerAndGitHub opens the ledger at loc and, if who is not nil, a GitHub
// client (see github) whose login is cached in it (c is nil otherwise). The
// client is made first, so a missing or malformed token or API root is
// refused before a ledger can be created (New makes no request).
func (f *Factory) ledgerAndGitHub(ctx context.Context, loc LedgerFlag, create store.Create, who *GitHubFlags, repo RepoFlag) (l *store.Opened, c *ghcheck.Client, err error) {
	return f.LedgerAndGitHubWith(ctx, loc, store.Options{Create: create}, who, repo)
}

// LedgerAndGitHubWith is ledgerAndGitHub with the ledger's options (a
// front on many repositories sets PerRepo).
func (f *Factory) LedgerAndGitHubWith(ctx context.Context, loc LedgerFlag, o store.Options, who *GitHubFlags, repo RepoFlag) (l *store.Opened, c *ghcheck.Client, err error) {
	if who != nil {
		if c, err = f.GitHub(ctx, *who, repo); err != nil {
			return nil, nil, err
		}
	}
	if l, err = f.OpenLedgerWith(ctx, loc, o, repo, c); err != nil {
		return nil, nil, err
	}
	if c != nil {
		CacheLogin(c, l)
	}
	return l, c, nil
}

func newGitHub(opts ghcheck.Options) (*ghcheck.Client, error) {
	c, err := ghcheck.New(opts)
	if err != nil {
		return nil, Usagef("%v", err)
	}
	return c, nil
}

// OpenLedgerToRead opens the ledger for a verb that only reads (status): a
// ledger this user may read but not write is opened read-only, with a
// note on stderr, instead of failing.
func (f *Factory) OpenLedgerToRead(ctx context.Context, loc LedgerFlag, repo RepoFlag) (*store.Opened, error) {
	l, err := f.OpenLedgerWith(ctx, loc, store.Options{Create: store.CreateNever, ReadOnlyOK: true}, repo, nil)
	if err == nil && l.ReadOnly {
		f.Logf("the ledger %s is read-only for this user: opened it read-only to show it (acting, reconcile and resolve need write access to it and its directory)", l.Location)
	}
	return l, err
}

// A repository ledger ("github") lives in repo (--repo, else GH_REPO, else
// GITHUB_REPOSITORY) and talks through c, or when c is nil through a
// client made from the environment's token.
func (f *Factory) OpenLedgerWith(ctx context.Context, flag LedgerFlag, o store.Options, repo RepoFlag, c *ghcheck.Client) (*store.Opened, error) {
	loc, err := ledger.ResolvePath(string(flag), f.IO.Getenv)
	if err != nil {
		return nil, Usagef("%v: %s", err, f.words().Set(effect.Option{Name: "ledger", Value: "PATH"}))
	}
	if store.IsGitHub(loc) {
		if r, rerr := repo.OrEnv(f.IO.Getenv); rerr == nil {
			o.Repo = r
		} else if repo != "" {
			return nil, rerr
		}
		o.GitHub = func(ctx context.Context) (*ghcheck.Client, error) {
			if c != nil {
				return c, nil
			}
			return f.GitHub(ctx, GitHubFlags{}, repo)
		}
	}
	o.Now, o.CreatedBy, o.Logf = f.IO.Now, createdBy(f.Version), f.Logf
	// The backends' errors name the ledger and say what to do.
	l, err := store.Open(ctx, loc, o)
	switch {
	case errors.Is(err, store.ErrUnsupported), errors.Is(err, store.ErrBadLocation):
		return nil, Usage(err)
	case err != nil:
		// The ledger's own words name no flag: say how to choose another.
		return nil, &failure.LedgerError{Err: fmt.Errorf("%w (%s chooses the ledger)", err, f.words().Name(effect.Option{Name: "ledger", Value: "PATH"}))}
	}
	return l, nil
}

// NarrowIn is the repository filter of a ledger verb (status, reconcile)
// on the ledger at loc: with the location "github", --repo chooses the
// ledger, which is that repository's own, so every entry in it is shown (a
// guarded command's has no repository); elsewhere repo narrows the view.
func (f *Factory) NarrowIn(loc LedgerFlag, repo string) string {
	if l, err := ledger.ResolvePath(string(loc), f.IO.Getenv); err == nil && strings.EqualFold(strings.TrimSpace(l), ghledger.Scheme) {
		return ""
	}
	return repo
}

// Engine returns an engine on the open ledger l, run as e says; gh is nil
// for `ghonce reconcile` with no entry on GitHub to settle.
func (f *Factory) Engine(l *store.Opened, gh reconcile.GitHub, e EngineFlags, mod ...func(*reconcile.Config)) *reconcile.Engine {
	cfg := reconcile.Config{
		// A flag's 0 means "not at all"; the engine reads 0 as its default.
		Ledger: l, GitHub: gh, LedgerNew: l.CannotVouch(), Wait: zeroIsOff(e.Wait), Settle: zeroIsOff(e.Settle),
		Now: f.IO.Now, TrustNeverAttempted: e.TrustLedger,
		Logf: f.Logf, DoneNeedsProof: l.InRepository, NoFormerKeys: l.InRepository,
		// 0 (the default) except in the matrix's binary (crashpoint).
		Lease: crashpoint.Lease(),
	}
	if repo, id, attempt, ok := actions.RunOf(f.IO.Getenv); ok {
		cfg.Run = reconcile.Run{Repo: repo, ID: id, Attempt: attempt}
	}
	tel := f.Telemetry(false)
	cfg.Metrics, cfg.Tracer = tel.Metrics, tel.Tracer
	for _, m := range mod {
		m(&cfg)
	}
	return reconcile.New(cfg)
}

// OffEngine is engine's counterpart for effects GitHub cannot see (package
// offgithub): a guarded command, whose output goes to stdout, or a tool call.
func (f *Factory) OffEngine(l *store.Opened, stdout io.Writer, e EngineFlags) *offgithub.Engine {
	tel := f.Telemetry(false)
	return offgithub.New(offgithub.Config{
		Ledger: l, LedgerNew: l.CannotVouch(), Wait: zeroIsOff(e.Wait), Settle: zeroIsOff(e.Settle),
		Now: f.IO.Now, Stdout: stdout, Stderr: f.IO.Err, Logf: f.Logf, NoFormerKeys: l.InRepository, DoneNeedsProof: l.InRepository,
		Lease: crashpoint.Lease(), Metrics: tel.Metrics, Tracer: tel.Tracer,
	})
}

// Words is how the front that runs this process names options (WordsFor).
func (f *Factory) words() effect.Words {
	if f.Say != nil {
		return f.Say
	}
	return WordsFor(f.IO.Getenv)
}

// Logf reports progress and waits on stderr.
func (f *Factory) Logf(format string, args ...any) {
	fmt.Fprintf(f.IO.Err, "ghonce: "+format+"\n", args...)
}

// ParseRepo parses --repo; a malformed one is a usage error.
func ParseRepo(s string) (ghcheck.Repo, error) {
	r, err := ghcheck.ParseRepo(s)
	if err != nil {
		return r, Usage(err)
	}
	return r, nil
}

// zeroIsOff maps a flag's 0 (and any negative value) to the engine's "off".
func zeroIsOff(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// createdBy is what a ledger this process creates records as its maker.
func createdBy(version string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("ghonce %s, pid %d on %s", version, os.Getpid(), host)
}
