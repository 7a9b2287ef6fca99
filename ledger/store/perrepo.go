package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	ghledger "github.com/ghonce/ghonce/ledger/github"
)

// perRepo is the repository ledger "github" of a front that acts on many
// repositories (ghonce mcp, Options.PerRepo): each key's claim lives in the
// repository its action writes to (ClaimParams.Repo), so who can write
// there is who can claim there, and each repository's runs share its
// claims with every other front on it. An action that names no repository
// (a guarded command) claims in the default repository, when there is one.
//
// A key is found in the repository that claimed it in this process, else
// by asking each repository this process has used (and the default): a
// key's repository is part of its identity, so one key is never in two.
type perRepo struct {
	c    *ghcheck.Client
	def  string // OWNER/NAME of the default repository; "" for none
	logf func(format string, args ...any)

	mu    sync.Mutex
	repos map[string]*ghledger.Ledger // by lower-cased OWNER/NAME
	order []string                    // the repositories in the order first used
	keys  map[string]string           // key -> lower-cased OWNER/NAME
}

var _ ledger.Ledger = (*perRepo)(nil)

func newPerRepo(c *ghcheck.Client, def string, logf func(string, ...any)) *perRepo {
	p := &perRepo{c: c, logf: logf, repos: map[string]*ghledger.Ledger{}, keys: map[string]string{}}
	if def != "" {
		if _, err := p.repo(def); err == nil {
			p.def = strings.ToLower(def)
		}
	}
	return p
}

// repo returns the ledger in the repository name (OWNER/NAME).
func (p *perRepo) repo(name string) (*ghledger.Ledger, error) {
	id := strings.ToLower(strings.TrimSpace(name))
	p.mu.Lock()
	defer p.mu.Unlock()
	if l, ok := p.repos[id]; ok {
		return l, nil
	}
	r, err := ghcheck.ParseRepo(strings.TrimSpace(name))
	if err != nil {
		return nil, fmt.Errorf("the repository ledger: %w", err)
	}
	l, err := ghledger.Open(ghledger.Options{Client: p.c, Repo: r, Logf: p.logf})
	if err != nil {
		return nil, err
	}
	p.repos[id] = l
	p.order = append(p.order, id)
	return l, nil
}

// all returns every repository's ledger used so far, in order.
func (p *perRepo) all() []*ghledger.Ledger {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]*ghledger.Ledger, 0, len(p.order))
	for _, id := range p.order {
		out = append(out, p.repos[id])
	}
	return out
}

func (p *perRepo) remember(key string, l *ghledger.Ledger) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys[key] = strings.ToLower(l.Repo().String())
}

// forClaim is the ledger an action on repo claims in.
func (p *perRepo) forClaim(repo string) (*ghledger.Ledger, error) {
	if repo == "" {
		repo = p.def
	}
	if repo == "" {
		return nil, errors.New("the ledger \"github\" keeps each claim in the repository its action writes to, and this action names none: set GH_REPO for it, or give the ledger as github://OWNER/REPO")
	}
	return p.repo(repo)
}

// forKey is the ledger that holds key: the one that claimed it here, else
// the first repository used so far that has it; ErrNotFound otherwise.
func (p *perRepo) forKey(ctx context.Context, key string) (*ghledger.Ledger, error) {
	p.mu.Lock()
	id, ok := p.keys[key]
	l := p.repos[id]
	p.mu.Unlock()
	if ok {
		return l, nil
	}
	for _, l := range p.all() {
		_, err := l.Get(ctx, key)
		switch {
		case err == nil:
			p.remember(key, l)
			return l, nil
		case !errors.Is(err, ledger.ErrNotFound):
			return nil, err
		}
	}
	return nil, ledger.ErrNotFound
}

// Claim implements ledger.Ledger in the repository p.Repo names.
func (p *perRepo) Claim(ctx context.Context, cp ledger.ClaimParams) (*ledger.Claim, error) {
	l, err := p.forClaim(cp.Repo)
	if err != nil {
		return nil, err
	}
	c, err := l.Claim(ctx, cp)
	if err == nil {
		p.remember(cp.Key, l)
	}
	return c, err
}

// Get implements ledger.Ledger.
func (p *perRepo) Get(ctx context.Context, key string) (*ledger.Entry, error) {
	l, err := p.forKey(ctx, key)
	if err != nil {
		return nil, err
	}
	return l.Get(ctx, key)
}

// List implements ledger.Ledger: the repository lp.Repo names, else every
// repository used so far, merged in the contract's order.
func (p *perRepo) List(ctx context.Context, lp ledger.ListParams) ([]*ledger.Entry, error) {
	if lp.Repo != "" {
		l, err := p.repo(lp.Repo)
		if err != nil {
			return nil, err
		}
		return l.List(ctx, lp)
	}
	each := lp
	each.Limit = 0
	var all []*ledger.Entry
	for _, l := range p.all() {
		es, err := l.List(ctx, each)
		if err != nil {
			return nil, err
		}
		all = append(all, es...)
	}
	return lp.Select(all), nil
}

// History implements ledger.Ledger.
func (p *perRepo) History(ctx context.Context, key string) ([]ledger.Transition, error) {
	l, err := p.forKey(ctx, key)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return l.History(ctx, key)
}

// Finish implements ledger.Ledger.
func (p *perRepo) Finish(ctx context.Context, fp ledger.FinishParams) (*ledger.Entry, error) {
	l, err := p.forKey(ctx, fp.Key)
	if err != nil {
		return nil, err
	}
	return l.Finish(ctx, fp)
}

// SetPayload implements ledger.Ledger.
func (p *perRepo) SetPayload(ctx context.Context, pp ledger.PayloadParams) error {
	l, err := p.forKey(ctx, pp.Key)
	if err != nil {
		return err
	}
	return l.SetPayload(ctx, pp)
}

// Renew implements ledger.Ledger.
func (p *perRepo) Renew(ctx context.Context, key string, fence int64, lease time.Duration) error {
	l, err := p.forKey(ctx, key)
	if err != nil {
		return err
	}
	return l.Renew(ctx, key, fence, lease)
}

// MarkSending implements ledger.Ledger.
func (p *perRepo) MarkSending(ctx context.Context, sp ledger.SendingParams) error {
	l, err := p.forKey(ctx, sp.Key)
	if err != nil {
		return err
	}
	return l.MarkSending(ctx, sp)
}

// Resolve implements ledger.Ledger.
func (p *perRepo) Resolve(ctx context.Context, rp ledger.ResolveParams) (*ledger.Entry, error) {
	l, err := p.forKey(ctx, rp.Key)
	if err != nil {
		return nil, err
	}
	return l.Resolve(ctx, rp)
}

// GetMeta implements ledger.Ledger: the store's facts live in the default
// repository; without one there are none.
func (p *perRepo) GetMeta(ctx context.Context, name string) (string, error) {
	if p.def == "" {
		return "", ledger.ErrNotFound
	}
	l, err := p.repo(p.def)
	if err != nil {
		return "", err
	}
	return l.GetMeta(ctx, name)
}

// PutMeta implements ledger.Ledger in the default repository; without one
// there is nowhere to keep the store's facts, and it says so.
func (p *perRepo) PutMeta(ctx context.Context, name, value string, ifAbsent bool) (bool, error) {
	if p.def == "" {
		return false, errors.New("the ledger \"github\" keeps its own facts in a default repository, and none is named: set GH_REPO, or give the ledger as github://OWNER/REPO")
	}
	l, err := p.repo(p.def)
	if err != nil {
		return false, err
	}
	return l.PutMeta(ctx, name, value, ifAbsent)
}

// Now implements ledger.Ledger: GitHub's clock, read from the default
// repository, else the first used, else an answer that names none.
func (p *perRepo) Now(ctx context.Context) (time.Time, error) {
	if ls := p.all(); len(ls) > 0 {
		return ls[0].Now(ctx)
	}
	return p.c.GitHubClock(ctx)
}

// Close implements ledger.Ledger; nothing is held open.
func (p *perRepo) Close() error { return nil }
