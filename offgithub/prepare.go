package offgithub

import (
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/taskkey"
)

// Action is one effect to have once.
type Action struct {
	Task, Step string
	// Repo is not needed; when given it is part of the key ("owner/name").
	Repo string
	Spec Spec
}

// Prepared is an Action validated once, with its key, identity and payload
// derived once. Prepare makes it; Engine.Do takes it. It is immutable.
type Prepared struct {
	a       Action // as cleaned
	id      taskkey.Identity
	key     string
	payload []byte // the Spec as the ledger stores it
	hash    string // of payload
	// legacy are the keys the action may have been recorded under before
	// ids were normalised to NFC (taskkey.LegacyKeys).
	legacy []string
}

// Prepare validates a and derives what Do needs from it, without touching
// the ledger. Its error is an *effect.InvalidError: bad input that no
// rerun can fix.
func Prepare(a Action) (*Prepared, error) {
	if a.Spec == nil {
		return nil, once.NoSpec
	}
	id, key, err := once.Key(a.Task, a.Step, a.Spec.Kind(), a.Repo, a.Spec.Target())
	if err != nil {
		return nil, err
	}
	p := &Prepared{id: id, key: key}
	if err := a.Spec.Validate(p.key); err != nil {
		return nil, once.Invalid(err)
	}
	if p.payload, p.hash, err = once.Encode(id.Kind, a.Spec); err != nil {
		return nil, once.Invalid(err)
	}
	p.legacy = taskkey.LegacyKeys(taskkey.Identity{Task: a.Task, Step: a.Step, Kind: id.Kind, Repo: a.Repo, Target: id.Target})
	a.Task, a.Step = id.Task, id.Step
	p.a = a
	return p, nil
}

// Key is the action's key: the same task, step, kind, repository and
// target always give the same key.
func (p *Prepared) Key() string { return p.key }

// register adds K, a kind off GitHub, to the registry of kinds (package
// kinds): its file calls it from its init function, func init() {
// register[Exec]() }.
func register[K any, P interface {
	*K
	Spec
	aimer
}]() {
	s := P(new(K))
	kinds.Register(kinds.Kind{
		Name: s.Kind(), Face: s.Face(),
		New: func() any { return P(new(K)) },
		Key: func(task, step, repo, target string) (string, error) {
			_, key, err := once.Key(task, step, s.Kind(), repo, s.aim(target).Target())
			return key, err
		},
	})
}

// isKind reports whether kind is a kind off GitHub.
func isKind(kind string) bool {
	k, ok := kinds.Lookup(kind)
	return ok && !k.OnGitHub
}

// aimer is every kind: aim is its description holding only target.
type aimer interface{ aim(target string) Spec }
