package reconcile

import (
	"context"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// A kind is a Spec (spec.go): how to validate, find and create its
// artifact. What follows is everything else a kind may do, each an
// interface its Spec implements or not; the engine asks for each with a
// type assertion and has a default for a kind without it. A kind's file
// (kind_pr.go, kind_issue.go, ...) holds every method it has.

// RunReader is a GitHub that reads when an attempt of a GitHub Actions run
// ran (*ghcheck.Client): OnChangeAuto asks it whether an artifact was made
// by an earlier attempt of the run a re-run is (Config.Run).
type RunReader interface {
	RunAttempt(ctx context.Context, r ghcheck.Repo, id int64, attempt int) (ghcheck.RunAttempt, error)
}

var _ RunReader = (*ghcheck.Client)(nil)

// DefaultStepper is a Spec with a default step: the step of an action
// that names none, whichever front it comes through (the CLI, the gh shim,
// the MCP server, the go-github transport), so the same act through two
// fronts has one key. Prepare and KeyOf apply it; a front passes an empty
// step rather than a default of its own. A kind without one needs its step
// named.
type DefaultStepper interface {
	DefaultStep() string
}

// PriorFinder is a Spec that looks for its own artifact and for the one
// an earlier attempt's description may have made (prior, of the same
// kind: another head branch, a reworded body) in one look-up, sharing the
// requests that depend only on the key (a PR's label and newest-PR reads).
//
// FindWithPrior answers as Find does: found if either exists; absent only
// when both looks are sure. Without it the engine calls Find twice, once
// per description.
type PriorFinder interface {
	FindWithPrior(ctx context.Context, env *Env, key string, prior Spec) effect.Result
}

// Mender is a Spec whose artifact is tagged after it exists (a PR: GitHub's
// create takes no labels), so a crash can leave it half-tagged. Mend
// completes the tags of an artifact: one this run just created (its Create
// leaves them to Mend, which the engine calls after the create answered,
// see Config.AnswerBeforeTags), and one a run found. It never creates an
// artifact, never fails the run (it returns a warning, or ""), and is not
// called by Reconcile, which only reads.
type Mender interface {
	Mend(ctx context.Context, env *Env, key string, art effect.Artifact) (warning string)
}

// Chooser is a Spec part of whose description is chosen on GitHub as its
// artifact is looked for (a branch from a ref: the commit the ref names
// now). Choose looks as Find does, in the same round trip, and returns the
// description with what it chose; the engine records that description in
// the ledger before the create and creates it. A rerun chooses again from
// its own description: a choice read from the ledger never becomes what
// is made (a stored commit is not a branch's start). Chooses reports
// whether this description has anything left to choose (a branch given
// its commit has not): without, the kind is looked for and created as any
// other.
type Chooser interface {
	Chooses() bool
	Choose(ctx context.Context, env *Env, key string) (Spec, effect.Result)
}

// choosing returns spec as a Chooser when it has something to choose.
func choosing(spec Spec) (Chooser, bool) {
	ch, ok := spec.(Chooser)
	return ch, ok && ch.Chooses()
}

// BatchFinder is a Spec whose artifact a batched listing of its
// repository can find (ghcheck.Client.FindMany): Reconcile settles many
// entries of such kinds with a few listings instead of one look-up each.
// Lookup describes the look-up for key; it makes no request.
type BatchFinder interface {
	Lookup(key string) ghcheck.Lookup
}

// Updatable is a Spec whose artifact can be edited to match it, for
// OnChangeUpdate. Update edits art (found or recorded for key) through
// the kind's own editing interface of Env.GitHub (use) and returns it; changed names the fields that differ from the stored
// description, and kept those of them it could not edit (a PR's head).
// Without it, or when Env.GitHub cannot edit (an error wrapping
// errLacks), OnChangeUpdate falls back to a warning.
type Updatable interface {
	Update(ctx context.Context, env *Env, key string, art effect.Artifact, changed []string) (out effect.Artifact, kept []string, err error)
}

// KeyLabeled is a Spec whose artifact carries the key's label
// (taskkey.Label) on GitHub: a pull request or an issue. `ghonce labels
// prune` deletes those labels once their entries are long done.
type KeyLabeled interface {
	KeyLabeled()
}

// AsFounder is a Spec whose artifact, found on GitHub, shows its own
// description (a PR's title, body and head; an issue's title and body; a
// comment's body). AsFound returns the Spec that describes the artifact as
// it is, this Spec's other fields kept and ghonce's marker removed, or
// false when the artifact read carries none. The engine compares a run's
// description with it when the ledger holds none of what made the artifact
// (a lost ledger: every fresh runner), so payload_changed and
// OnChangeUpdate work there too. Without it a found artifact is compared
// with the ledger's description only.
type AsFounder interface {
	AsFound(key, repoOwner string, art effect.Artifact) (Spec, bool)
}
