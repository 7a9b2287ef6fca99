package offgithub

import (
	"fmt"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/once"
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

// kinds maps each kind's name to a new, empty description of it: the list
// of kinds off GitHub, used to read payloads back from the ledger.
var kinds = once.Kinds[Spec]{
	Exec{}.Kind():     func() Spec { return &Exec{} },
	ToolCall{}.Kind(): func() Spec { return &ToolCall{} },
}

// Kinds names every kind off GitHub, sorted.
func Kinds() []string { return kinds.Names() }

// IsKind reports whether kind is a kind off GitHub.
func IsKind(kind string) bool {
	_, ok := kinds[kind]
	return ok
}

// FaceOf returns kind's Face; false for a kind that is not off GitHub.
func FaceOf(kind string) (effect.Face, bool) {
	mk, ok := kinds[kind]
	if !ok {
		return effect.Face{}, false
	}
	return mk().Face(), true
}

// DecodeSpec rebuilds the Spec of a kind from its stored payload.
func DecodeSpec(kind string, payload []byte) (Spec, error) { return kinds.Decode(kind, payload) }

// KeyOfTarget is the key of an action of kind on target (Spec.Target),
// for a caller that has the target and not the description (`ghonce
// key`). a.Spec is not read. Its error is an *effect.InvalidError.
func KeyOfTarget(kind, target string, a Action) (string, error) {
	mk, ok := kinds[kind]
	if !ok {
		return "", &effect.InvalidError{Field: "kind", Problem: fmt.Sprintf("%q is not a kind", kind), Want: "one of " + strings.Join(Kinds(), ", ")}
	}
	_, key, err := once.Key(a.Task, a.Step, kind, a.Repo, mk().(aimer).aim(target).Target())
	return key, err
}

// aimer is every kind: aim is its description holding only target.
type aimer interface{ aim(target string) Spec }
