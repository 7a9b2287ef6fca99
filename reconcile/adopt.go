package reconcile

import (
	"context"
	"errors"
	"fmt"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
)

// AdoptParams is an artifact on GitHub that carries Key and that no
// ledger recorded: `ghonce audit` keeps it from a group of duplicates.
type AdoptParams struct {
	Key  string
	Repo string // "owner/name"
	// Spec describes the artifact as it is on GitHub (its title, body
	// without the marker, labels...): stored as the entry's payload, so a
	// later run of the task with the same description replays it as
	// skipped, and one with another description is told so (OnChange).
	Spec     Spec
	Artifact effect.Artifact
	// Why is recorded in the entry's history.
	Why string
}

// AdoptTask and AdoptStep are what an adopted entry records as its task
// and step: the key is known, the task and step it was derived from are
// not.
const (
	AdoptTask = "ghonce-audit"
	AdoptStep = "adopt"
)

// Adopt records p.Artifact as p.Key's, done (outcome found), so that the
// next run of the task that made it replays it instead of making it again.
// It writes only the ledger, and only when the key has no done entry: an
// entry already done is left as it is (adopted reports false). An entry
// left attempting by a crashed attempt is settled by it. The key cannot be
// checked against p.Spec (the task and step that derived it are unknown):
// the caller vouches for it, having read it off the artifact.
func (e *Engine) Adopt(ctx context.Context, p AdoptParams) (adopted bool, err error) {
	if p.Spec == nil {
		return false, errors.New("adopt: no spec")
	}
	if _, err := ghcheck.ParseRepo(p.Repo); err != nil {
		return false, err
	}
	payload, hash, err := encodeSpec(p.Spec)
	if err != nil {
		return false, err
	}
	why := p.Why
	if why == "" {
		why = "adopted"
	}
	c, err := e.core.Claim(ctx, ledger.ClaimParams{
		Key: p.Key, Task: AdoptTask, Step: AdoptStep, Kind: p.Spec.Kind(), Repo: p.Repo, Target: p.Spec.Target(),
		Payload: payload, PayloadHash: hash, Why: why,
	})
	if err != nil {
		return false, err
	}
	if c.State == ledger.ClaimDone {
		return false, nil
	}
	fp := once.FinishParams(p.Key, c.Entry.Fence, ledger.Done, string(outcome.Found), p.Artifact, "")
	fp.Why = why
	fp.Verifiable = true
	if _, err := e.core.Record(fp); err != nil {
		return false, fmt.Errorf("adopt %s: %w", p.Key, err)
	}
	return true, nil
}
