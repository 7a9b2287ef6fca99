package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/reconcile"
)

// factory builds what commands need, lazily, so a command that does not
// use the ledger or GitHub never opens or calls them.
type factory struct {
	sys IO
	g   *global
}

// token returns the GitHub token from GH_TOKEN or GITHUB_TOKEN.
func (f *factory) token() (string, error) {
	for _, k := range []string{"GH_TOKEN", "GITHUB_TOKEN"} {
		if t := f.sys.Getenv(k); t != "" {
			return t, nil
		}
	}
	return "", usagef("no GitHub token: set GH_TOKEN or GITHUB_TOKEN (try `ghonce demo` to see ghonce work without one)")
}

func (f *factory) github() (*ghcheck.Client, error) {
	tok, err := f.token()
	if err != nil {
		return nil, err
	}
	base := f.sys.Getenv("GITHUB_API_URL")
	c, err := ghcheck.New(ghcheck.Options{BaseURL: base, Token: tok, TrustedAuthors: f.g.trustAuthors, UserAgent: "ghonce"})
	if err != nil {
		return nil, usagef("%v", err)
	}
	return c, nil
}

// openLedger opens the ledger at --ledger, GHONCE_LEDGER or the default path.
func (f *factory) openLedger(ctx context.Context) (*sqlite.Ledger, error) {
	path, err := ledger.ResolvePath(f.g.ledgerPath, f.sys.Getenv)
	if err != nil {
		return nil, err
	}
	// sqlite.Open's errors name the file and say what to do.
	return sqlite.Open(ctx, path, sqlite.Options{Now: f.sys.Now})
}

// engine opens the ledger and, when withGitHub, the GitHub client, and
// returns an engine with a closer for the ledger.
func (f *factory) engine(ctx context.Context, withGitHub bool, stdout io.Writer) (*reconcile.Engine, ledger.Ledger, func(), error) {
	var gh *ghcheck.Client
	if withGitHub {
		var err error
		if gh, err = f.github(); err != nil {
			return nil, nil, nil, err
		}
	}
	l, err := f.openLedger(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	e := reconcile.New(reconcile.Config{
		// A flag's 0 means "not at all"; the engine reads 0 as its default.
		Ledger: l, GitHub: gh, LedgerNew: l.Created(), Wait: zeroIsOff(f.g.wait), Settle: zeroIsOff(f.g.settle),
		Now: f.sys.Now, Stdout: stdout, Stderr: f.sys.Err,
		Logf: func(format string, args ...any) { fmt.Fprintf(f.sys.Err, "ghonce: "+format+"\n", args...) },
	})
	return e, l, func() { _ = l.Close() }, nil
}

// zeroIsOff maps a flag's 0 (and any negative value) to the engine's "off".
func zeroIsOff(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}
