package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
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
	// Stdout and Stderr receive a guarded command's output.
	Stdout, Stderr io.Writer

	// markSending, set for a Spec that marks its own create (OwnSending),
	// records that the create is about to start, naming the process p that
	// runs it; its error is a *effect.CreateError (nothing was started).
	markSending func(ctx context.Context, p ledger.Proc) error
	// unproven, when not empty, says why the processes of an earlier
	// attempt of a guarded command cannot be proven gone from here.
	unproven string
}

// Action is one side effect to perform once.
type Action struct {
	// Step "" is the kind's default step (DefaultStep), for a kind that
	// has one.
	Task, Step string
	Repo       string // "owner/name"; empty for a command that does not touch GitHub
	Spec       Spec
	// OnChange says what to do when the key is done but this description
	// differs from the stored one: OnChangeAuto (""), OnChangeWarn,
	// OnChangeFail or OnChangeUpdate.
	OnChange string
	// Heard, when set, reports whether the front's session (an MCP
	// session, a go-github transport) already told its caller of the
	// artifact of key: then a changed text is a second act, not a retry
	// after a crash (OnChangeAuto).
	Heard func(key string) bool
}

// kinds maps each kind's name to a new, empty description of it: the one
// list of kinds, used to read payloads back from the ledger.
//
// Each kind is a description in a file of its own (kind_pr.go, ...,
// exec.go): its fields are the payload stored in the ledger (so `ghonce
// reconcile` can look for it later without the original command line),
// Target is its part of the key, and Find/Create say how to look for and
// make its artifact; its file holds every method it has, the optional
// capabilities (capabilities.go) included.
var kinds = map[string]func() Spec{
	PR{}.Kind():       func() Spec { return &PR{} },
	Issue{}.Kind():    func() Spec { return &Issue{} },
	Comment{}.Kind():  func() Spec { return &Comment{} },
	Branch{}.Kind():   func() Spec { return &Branch{} },
	File{}.Kind():     func() Spec { return &File{} },
	Exec{}.Kind():     func() Spec { return &Exec{} },
	ToolCall{}.Kind(): func() Spec { return &ToolCall{} },

	Close{}.Kind():         func() Spec { return &Close{} },
	DeleteComment{}.Kind(): func() Spec { return &DeleteComment{} },
	DeleteBranch{}.Kind():  func() Spec { return &DeleteBranch{} },
}

// Kinds names every kind, sorted.
func Kinds() []string {
	out := make([]string, 0, len(kinds))
	for k := range kinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// IsGitHubKind reports whether kind acts on GitHub (every kind but a
// guarded command): its actions need a repository, and settling its
// entries needs a GitHub client. A kind this build does not know (an
// entry written by a newer ghonce) counts as one: asking for a token is
// the safe side.
func IsGitHubKind(kind string) bool {
	mk, ok := kinds[kind]
	return !ok || onGitHub(mk())
}

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
func DecodeSpec(kind string, payload []byte) (Spec, error) {
	mk, ok := kinds[kind]
	if !ok {
		return nil, fmt.Errorf("decode payload: unknown kind %q (written by a newer ghonce?)", kind)
	}
	s := mk()
	if err := json.Unmarshal(payload, s); err != nil {
		return nil, fmt.Errorf("decode %s payload: %w", kind, err)
	}
	return s, nil
}

// mark records that a guarded command is about to start under p, through
// markSending; without one (a Spec run outside the engine) it records
// nothing.
func (env *Env) mark(ctx context.Context, p ledger.Proc) error {
	if env.markSending == nil {
		return nil
	}
	return env.markSending(ctx, p)
}
