package cli

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

// factory builds what commands need, lazily, so a command that does not
// use the ledger or GitHub never opens or calls them.
type factory struct {
	sys IO
	// version is this build's (see readVersion): what a ledger it creates
	// records of its maker and what its telemetry reports.
	version string
	// say, when set, is the front's words for options (the gh shim's);
	// else wordsFor decides.
	say effect.Words
	// printedJSON: the run's one JSON object is out, and a later failure
	// adds none.
	printedJSON bool
	// gh is the client github made for ghFor (its arguments), kept so a
	// run that reads GitHub before acting (branch create --from, the gh
	// shim's default base) authenticates once: a GitHub App's handshake
	// is three requests.
	gh    *ghcheck.Client
	ghFor string
	// tel is the run's metrics and traces (observe.go); nil until asked.
	tel *telemetry
	// minted are the installation tokens a GitHub App minted in this run
	// (mintedToken), which no output may show.
	minted secret.Set
}

// token returns the GitHub token from GH_TOKEN or GITHUB_TOKEN.
func (f *factory) token() (string, error) {
	for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN"} {
		if t := f.sys.Getenv(k); t != "" {
			return t, nil
		}
	}
	return "", &failure.MissingCredentials{Err: errors.New("no GitHub token: set GH_TOKEN or GITHUB_TOKEN (try `ghonce demo` to see ghonce work without one)")}
}

// github returns a client authenticated with the token, or as the GitHub
// App who or the environment configures; repo is the command's --repo, for
// finding the App's installation.
func (f *factory) github(ctx context.Context, who gitHubFlags, repo repoFlag) (*ghcheck.Client, error) {
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

// githubOn is github with the token's login cached in l (by a fingerprint
// of the token, never the token): only the first run on a ledger spends
// GET /user.
func (f *factory) githubOn(ctx context.Context, who gitHubFlags, repo repoFlag, l *store.Opened) (*ghcheck.Client, error) {
	c, err := f.github(ctx, who, repo)
	if err != nil {
		return nil, err
	}
	cacheLogin(c, l)
	return c, nil
}

// cacheLogin caches c's login in l, except in a repository ledger: there
// the cache would cost two writes to the repository to save one read, and
// anyone who can push could plant a login in it.
func cacheLogin(c *ghcheck.Client, l *store.Opened) {
	if !l.InRepository {
		c.UseLoginCache(reconcile.LoginCache(l))
	}
}

// ledgerAndGitHub opens the ledger at loc and, if who is not nil, a GitHub
// client (see github) whose login is cached in it (c is nil otherwise). The
// client is made first, so a missing or malformed token or API root is
// refused before a ledger can be created (New makes no request).
func (f *factory) ledgerAndGitHub(ctx context.Context, loc ledgerFlag, create store.Create, who *gitHubFlags, repo repoFlag) (l *store.Opened, c *ghcheck.Client, err error) {
	return f.ledgerAndGitHubWith(ctx, loc, store.Options{Create: create}, who, repo)
}

// ledgerAndGitHubWith is ledgerAndGitHub with the ledger's options (a
// front on many repositories sets PerRepo).
func (f *factory) ledgerAndGitHubWith(ctx context.Context, loc ledgerFlag, o store.Options, who *gitHubFlags, repo repoFlag) (l *store.Opened, c *ghcheck.Client, err error) {
	if who != nil {
		if c, err = f.github(ctx, *who, repo); err != nil {
			return nil, nil, err
		}
	}
	if l, err = f.openLedgerWith(ctx, loc, o, repo, c); err != nil {
		return nil, nil, err
	}
	if c != nil {
		cacheLogin(c, l)
	}
	return l, c, nil
}

func newGitHub(opts ghcheck.Options) (*ghcheck.Client, error) {
	c, err := ghcheck.New(opts)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return c, nil
}

// openLedger opens the ledger at loc (--ledger), GHONCE_LEDGER or the default path,
// creating a missing one only as create allows: the verbs that look at or
// settle the ledger pass store.CreateNever, so a typo is an error (exit 1)
// rather than a new, empty ledger. A location in a scheme this build does
// not support is a usage error.
func (f *factory) openLedger(ctx context.Context, loc ledgerFlag, create store.Create) (*store.Opened, error) {
	return f.openLedgerWith(ctx, loc, store.Options{Create: create}, "", nil)
}

// openLedgerToRead is openLedger for a verb that only reads (status): a
// ledger this user may read but not write is opened read-only, with a
// note on stderr, instead of failing.
func (f *factory) openLedgerToRead(ctx context.Context, loc ledgerFlag, repo repoFlag) (*store.Opened, error) {
	l, err := f.openLedgerWith(ctx, loc, store.Options{Create: store.CreateNever, ReadOnlyOK: true}, repo, nil)
	if err == nil && l.ReadOnly {
		f.logf("the ledger %s is read-only for this user: opened it read-only to show it (acting, reconcile and resolve need write access to it and its directory)", l.Location)
	}
	return l, err
}

// A repository ledger ("github") lives in repo (--repo, else GH_REPO, else
// GITHUB_REPOSITORY) and talks through c, or when c is nil through a
// client made from the environment's token.
func (f *factory) openLedgerWith(ctx context.Context, flag ledgerFlag, o store.Options, repo repoFlag, c *ghcheck.Client) (*store.Opened, error) {
	loc, err := ledger.ResolvePath(string(flag), f.sys.Getenv)
	if err != nil {
		return nil, usagef("%v: %s", err, f.words().Set(effect.Option{Name: "ledger", Value: "PATH"}))
	}
	if store.IsGitHub(loc) {
		if r, rerr := repo.orEnv(f.sys.Getenv); rerr == nil {
			o.Repo = r
		} else if repo != "" {
			return nil, rerr
		}
		o.GitHub = func(ctx context.Context) (*ghcheck.Client, error) {
			if c != nil {
				return c, nil
			}
			return f.github(ctx, gitHubFlags{}, repo)
		}
	}
	o.Now, o.CreatedBy, o.Logf = f.sys.Now, createdBy(f.version), f.logf
	// The backends' errors name the ledger and say what to do.
	l, err := store.Open(ctx, loc, o)
	switch {
	case errors.Is(err, store.ErrUnsupported), errors.Is(err, store.ErrBadLocation):
		return nil, usage(err)
	case err != nil:
		// The ledger's own words name no flag: say how to choose another.
		return nil, &failure.LedgerError{Err: fmt.Errorf("%w (%s chooses the ledger)", err, f.words().Name(effect.Option{Name: "ledger", Value: "PATH"}))}
	}
	return l, nil
}

// narrowIn is the repository filter of a ledger verb (status, reconcile)
// on the ledger at loc: with the location "github", --repo chooses the
// ledger, which is that repository's own, so every entry in it is shown (a
// guarded command's has no repository); elsewhere repo narrows the view.
func (f *factory) narrowIn(loc ledgerFlag, repo string) string {
	if l, err := ledger.ResolvePath(string(loc), f.sys.Getenv); err == nil && strings.EqualFold(strings.TrimSpace(l), ghledger.Scheme) {
		return ""
	}
	return repo
}

// engine returns an engine on the open ledger l, run as e says; gh is nil
// for `ghonce reconcile` with no entry on GitHub to settle.
func (f *factory) engine(l *store.Opened, gh reconcile.GitHub, e engineFlags, mod ...func(*reconcile.Config)) *reconcile.Engine {
	cfg := reconcile.Config{
		// A flag's 0 means "not at all"; the engine reads 0 as its default.
		Ledger: l, GitHub: gh, LedgerNew: l.CannotVouch(), Wait: zeroIsOff(e.Wait), Settle: zeroIsOff(e.Settle),
		Now: f.sys.Now, TrustNeverAttempted: e.TrustLedger,
		Logf: f.logf, DoneNeedsProof: l.InRepository, NoFormerKeys: l.InRepository,
		// 0 (the default) except in the matrix's binary (crashpoint).
		Lease: crashpoint.Lease(),
	}
	if repo, id, attempt, ok := actions.RunOf(f.sys.Getenv); ok {
		cfg.Run = reconcile.Run{Repo: repo, ID: id, Attempt: attempt}
	}
	tel := f.telemetry(false)
	cfg.Metrics, cfg.Tracer = tel.metrics, tel.tracer
	for _, m := range mod {
		m(&cfg)
	}
	return reconcile.New(cfg)
}

// offEngine is engine's counterpart for effects GitHub cannot see (package
// offgithub): a guarded command, whose output goes to stdout, or a tool call.
func (f *factory) offEngine(l *store.Opened, stdout io.Writer, e engineFlags) *offgithub.Engine {
	tel := f.telemetry(false)
	return offgithub.New(offgithub.Config{
		Ledger: l, LedgerNew: l.CannotVouch(), Wait: zeroIsOff(e.Wait), Settle: zeroIsOff(e.Settle),
		Now: f.sys.Now, Stdout: stdout, Stderr: f.sys.Err, Logf: f.logf, NoFormerKeys: l.InRepository, DoneNeedsProof: l.InRepository,
		Lease: crashpoint.Lease(), Metrics: tel.metrics, Tracer: tel.tracer,
	})
}

// words is how the front that runs this process names options (wordsFor).
func (f *factory) words() effect.Words {
	if f.say != nil {
		return f.say
	}
	return wordsFor(f.sys.Getenv)
}

// logf reports progress and waits on stderr.
func (f *factory) logf(format string, args ...any) {
	fmt.Fprintf(f.sys.Err, "ghonce: "+format+"\n", args...)
}

// parseRepo parses --repo; a malformed one is a usage error.
func parseRepo(s string) (ghcheck.Repo, error) {
	r, err := ghcheck.ParseRepo(s)
	if err != nil {
		return r, usage(err)
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
