package reconcile

import (
	"context"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/once"
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
	// OnChange says what to do when the key is done but this description
	// differs from the stored one: OnChangeAuto (""), OnChangeWarn,
	// OnChangeFail or OnChangeUpdate.
	OnChange string
}

// kinds maps each kind's name to a new, empty description of it: the one
// list of kinds on GitHub, used to read payloads back from the ledger (the
// kinds off GitHub are package offgithub's).
//
// Each kind is a description in a file of its own (kind_pr.go, ...): its
// fields are the payload stored in the ledger (so `ghonce
// reconcile` can look for it later without the original command line),
// Target is its part of the key, and Find/Create say how to look for and
// make its artifact; its file holds every method it has, the optional
// capabilities (capabilities.go) included.
var kinds = once.Kinds[Spec]{
	PR{}.Kind():      func() Spec { return &PR{} },
	Issue{}.Kind():   func() Spec { return &Issue{} },
	Comment{}.Kind(): func() Spec { return &Comment{} },
	Branch{}.Kind():  func() Spec { return &Branch{} },
	File{}.Kind():    func() Spec { return &File{} },

	ReviewComment{}.Kind(): func() Spec { return &ReviewComment{} },

	Close{}.Kind():         func() Spec { return &Close{} },
	DeleteComment{}.Kind(): func() Spec { return &DeleteComment{} },
	DeleteBranch{}.Kind():  func() Spec { return &DeleteBranch{} },
}

// Kinds names every kind on GitHub, sorted.
func Kinds() []string { return kinds.Names() }

// CarriesKeyLabel reports whether kind's artifact carries the key's label
// (taskkey.Label) on GitHub: a pull request's or an issue's does.
func CarriesKeyLabel(kind string) bool {
	mk, ok := kinds[kind]
	if !ok {
		return false
	}
	_, l := mk().(KeyLabeled)
	return l
}

// DecodeSpec rebuilds the Spec of a kind from its stored payload.
func DecodeSpec(kind string, payload []byte) (Spec, error) { return kinds.Decode(kind, payload) }
