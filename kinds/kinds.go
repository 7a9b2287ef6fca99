// Package kinds is the one registry of ghonce's kinds: every sort of side
// effect made once, those on GitHub (package reconcile) and those GitHub
// cannot see (package offgithub). A front asks it about a kind by its name
// (its Face, whether it acts on GitHub, the key of an action of it on a
// target, a payload decoded) without knowing which engine runs it.
//
// A kind registers itself from its own file, in one line:
//
//	func init() { register[PR]() }
//
// where register is its engine's, which fills in a Kind. This is how
// database/sql takes drivers and image takes formats, and for the same
// reason: the set is closed at compile time, every program that links an
// engine must know all of its kinds (a ledger entry written by any of them
// is decoded by name, by `ghonce reconcile`, audit, the MCP server), and a
// kind added in its own file then touches no shared list. An explicit
// registry value passed around (River's Workers) suits a set the user
// composes at run time, which this is not. The registry holds the kinds of
// the engines linked into the program; it is written by init functions
// only, and read freely after.
package kinds

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ghonce/ghonce/effect"
)

// Kind is a kind as the registry holds it.
type Kind struct {
	// Name is the kind's name, part of every key of it: "pr". Never
	// renamed.
	Name string
	// OnGitHub: its artifact is on GitHub (package reconcile runs it), so
	// its actions need a repository and settling them a GitHub client.
	OnGitHub bool
	// Face is what every front needs to know of it (effect.Face).
	Face effect.Face
	// New returns a new, empty description of it, a pointer of its
	// engine's Spec type, which a stored payload decodes into.
	New func() any
	// Key is the key of an action of it on target (the kind's part of
	// the key) in task, step and repo, for a caller that has the target
	// and not the description (`ghonce key`): the target is checked as
	// the kind's Validate checks it, and an empty step is the kind's
	// default. Its error is an *effect.InvalidError.
	Key func(task, step, repo, target string) (string, error)
}

var registry = map[string]Kind{}

// Register adds k. It is called from an engine's init functions; a kind
// without a name or registered twice is a bug of the program, and panics.
func Register(k Kind) {
	if k.Name == "" || k.New == nil || k.Key == nil {
		panic(fmt.Sprintf("kinds: Register of an incomplete kind %q", k.Name))
	}
	if _, dup := registry[k.Name]; dup {
		panic(fmt.Sprintf("kinds: kind %q registered twice", k.Name))
	}
	registry[k.Name] = k
}

// Lookup returns the kind named name; false for a kind this program does
// not know (an entry written by a newer ghonce).
func Lookup(name string) (Kind, bool) {
	k, ok := registry[name]
	return k, ok
}

// All names every kind, sorted.
func All() []string { return slices.Sorted(maps.Keys(registry)) }

// OnGitHub reports whether kind acts on GitHub. A kind this program does
// not know counts as one: asking for a token is the safe side.
func OnGitHub(kind string) bool {
	k, ok := registry[kind]
	return !ok || k.OnGitHub
}

// FaceOf returns kind's Face; false for a kind this program does not know.
func FaceOf(kind string) (effect.Face, bool) {
	k, ok := registry[kind]
	return k.Face, ok
}

// KeyOfTarget is the key of an action of kind on target (see Kind.Key).
// Its error is an *effect.InvalidError.
func KeyOfTarget(kind, target, task, step, repo string) (string, error) {
	k, ok := registry[kind]
	if !ok {
		return "", NotAKind(kind)
	}
	return k.Key(task, step, repo, target)
}

// NotAKind is the error for a name that is no kind.
func NotAKind(name string) error {
	return &effect.InvalidError{Field: "kind", Problem: fmt.Sprintf("%q is not a kind", name), Want: "one of " + strings.Join(All(), ", ")}
}

// Decode rebuilds the description of kind from its stored payload: what
// its New returns, filled.
func Decode(kind string, payload []byte) (any, error) {
	k, ok := registry[kind]
	if !ok {
		return nil, fmt.Errorf("decode payload: unknown kind %q (written by a newer ghonce?)", kind)
	}
	s := k.New()
	if err := json.Unmarshal(payload, s); err != nil {
		return nil, fmt.Errorf("decode %s payload: %w", kind, err)
	}
	return s, nil
}
