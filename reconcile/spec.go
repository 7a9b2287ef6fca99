package reconcile

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
)

// Spec describes one action of one kind.
type Spec interface {
	// Kind names the kind; it is part of the key.
	Kind() string
	// Face is what every front needs to know of the kind, as data (Face).
	Face() Face
	// Target is the kind's part of the key: the base branch of a PR, the
	// issue number of a comment, the name of a branch, ...
	Target() string
	// Validate reports bad input before anything is recorded or sent
	// (Prepare calls it). It must refuse every shape GitHub's layer
	// refuses before sending, by calling ghcheck's Check functions for the
	// requests Find and Create make: an action it accepts must never be
	// refused by those checks once its intent is recorded.
	Validate(key string) error
	// Find looks for the artifact tagged with key.
	Find(ctx context.Context, env *Env, key string) effect.Result
	// Create makes the artifact, tagged with key. Its error is a
	// *effect.CreateError whose Class says whether anything may exist.
	Create(ctx context.Context, env *Env, key string) (effect.Artifact, error)
}

// Env is what a Spec may use while it runs.
type Env struct {
	GitHub GitHub
	Repo   ghcheck.Repo
	// Prior is the entry's status before this attempt claimed it; empty
	// for an entry this attempt created.
	Prior ledger.Status
	// LedgerNew is true when the ledger file was created by this process:
	// an earlier ledger may have been lost.
	LedgerNew bool
	// NeverAttempted is true when the ledger is established and has no
	// earlier attempt of this key: only another ledger could have made it.
	NeverAttempted bool
	// Since, when not zero, is when the first attempt of this key began,
	// less clock skew: what any attempt made was created after it.
	Since time.Time
}

// Action is one side effect to perform once.
type Action struct {
	// Step "" is the kind's default step (DefaultStep), for a kind that
	// has one.
	Task, Step string
	// StepDerived says that the front derived Step from its own identity
	// of the running step (an engine adapter's activity id) rather than
	// the caller naming the act: under OnChangeAuto it shows no more than
	// the kind's default step does.
	StepDerived bool
	Repo        string // "owner/name"
	Spec        Spec
	// repo is Repo as Prepare parsed it, once: every request of the action
	// reads it, not the string.
	repo ghcheck.Repo
	// OnChange says what to do when the key is done but this description
	// differs from the stored one: OnChangeAuto (""), OnChangeWarn,
	// OnChangeFail or OnChangeUpdate.
	OnChange string
}

// register adds K, a kind on GitHub, to the registry of kinds (package
// kinds). Each kind is a description in a file of its own (kind_pr.go,
// ...), which registers it in one line, func init() { register[PR]() }:
// its fields are the payload stored in the ledger (so `ghonce reconcile`
// can look for it later without the original command line), Target is its
// part of the key, and Find/Create say how to look for and make its
// artifact; its file holds every method it has, the optional capabilities
// (capabilities.go) included.
func register[K any, P interface {
	*K
	Spec
	aimer
}]() {
	s := P(new(K))
	kinds.Register(kinds.Kind{
		Name: s.Kind(), OnGitHub: true, Face: s.Face(),
		New: func() any { return P(new(K)) },
		Key: func(task, step, repo, target string) (string, error) {
			spec, err := s.aim(target)
			if err != nil {
				return "", invalid(err)
			}
			return KeyOf(Action{Task: task, Step: step, Repo: repo, Spec: spec})
		},
	})
}

// Kinds names every kind on GitHub, sorted.
func Kinds() []string {
	return slices.DeleteFunc(kinds.All(), func(k string) bool { return !isKind(k) })
}

// isKind reports whether kind is a kind on GitHub this program knows.
func isKind(kind string) bool {
	k, ok := kinds.Lookup(kind)
	return ok && k.OnGitHub
}

// CarriesKeyLabel reports whether kind's artifact carries the key's label
// (taskkey.Label) on GitHub: a pull request's or an issue's does.
func CarriesKeyLabel(kind string) bool {
	k, ok := kinds.Lookup(kind)
	if !ok {
		return false
	}
	_, l := k.New().(KeyLabeled)
	return l
}

// DecodeSpec rebuilds the Spec of a kind on GitHub from its stored payload.
func DecodeSpec(kind string, payload []byte) (Spec, error) {
	s, err := kinds.Decode(kind, payload)
	if err != nil {
		return nil, err
	}
	spec, ok := s.(Spec)
	if !ok {
		return nil, fmt.Errorf("decode payload: kind %q is not on GitHub", kind)
	}
	return spec, nil
}
