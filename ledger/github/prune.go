package github

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

// PruneParams says which claims Prune removes.
type PruneParams struct {
	// Before: done claims last written before it (on GitHub's clock, as
	// Now reads it) are removed.
	Before time.Time
	// Keep, if set, spares the claims it returns true for (the CLI keeps
	// guarded commands', whose outcome GitHub cannot be asked about).
	Keep func(e *ledger.Entry) bool
	// DryRun lists what would be removed and removes nothing.
	DryRun bool
}

// Prune deletes the refs of done claims last written before p.Before,
// oldest first, and returns their entries. Only done claims go: a failed
// or attempting one may be claimed again at any moment, and GitHub's
// DELETE has no precondition that would keep a claim moved meanwhile. A
// pruned key is as if it had never been recorded here: the next run of it
// looks it up on GitHub by its tags, as after a lost ledger.
func (l *Ledger) Prune(ctx context.Context, p PruneParams) ([]*ledger.Entry, error) {
	all, err := l.entries(ctx)
	if err != nil {
		return nil, err
	}
	var gone []*ledger.Entry
	for _, c := range all {
		e := c.entry
		if e.Status != ledger.Done || !e.UpdatedAt.Before(p.Before) || (p.Keep != nil && p.Keep(e)) {
			continue
		}
		if !p.DryRun {
			// Read again just before deleting: a person may have sent it
			// back to failed and a run claimed it since the listing.
			sha, _, err := l.c.ReadRef(ctx, l.repo, c.ref)
			if err != nil {
				return gone, l.explain("prune the ledger", err)
			}
			if sha != c.sha {
				continue
			}
			if err := l.c.DeleteRefNamed(ctx, l.repo, c.ref); err != nil {
				return gone, l.explain("prune the ledger", err)
			}
			l.remember(c.ref, nil)
		}
		gone = append(gone, clone(e))
	}
	slices.SortFunc(gone, func(a, b *ledger.Entry) int { return a.UpdatedAt.Compare(b.UpdatedAt) })
	return gone, nil
}

// Remove deletes the claim of key whatever it holds (a done, failed or
// attempting claim, a guarded command's, or one that holds no claim of
// the key), and returns the entry it held: nil for one it could not read.
// ErrNotFound when the key has no claim. With dryRun it deletes nothing.
// GitHub's DELETE has no precondition: a claim written meanwhile goes too.
func (l *Ledger) Remove(ctx context.Context, key string, dryRun bool) (*ledger.Entry, error) {
	ref := l.RefOf(key)
	sha, _, err := l.c.ReadRef(ctx, l.repo, ref)
	switch {
	case err != nil:
		return nil, l.explain("prune the ledger", err)
	case sha == "":
		return nil, ledger.ErrNotFound
	}
	var e *ledger.Entry
	raw, err := l.record(ctx, sha)
	if err == nil {
		if rec, verr := l.view(ref, raw); verr == nil {
			e = clone(rec.entry)
		}
	} else if errors.Is(err, ledger.ErrUnavailable) {
		return nil, err
	}
	if !dryRun {
		if err := l.c.DeleteRefNamed(ctx, l.repo, ref); err != nil {
			return nil, l.explain("prune the ledger", err)
		}
		l.remember(ref, nil)
	}
	return e, nil
}
