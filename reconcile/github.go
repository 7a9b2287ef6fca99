package reconcile

import (
	"context"
	"errors"
	"fmt"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// GitHub is what the engine itself asks of GitHub: the token's identity.
// *ghcheck.Client is one; engine tests may pass a fake that makes no HTTP
// request. Login's error matching ghcheck.ErrCredentials means no rerun
// can fix it.
//
// Each kind declares, in its own file, the narrow interface of the
// ghcheck methods it calls (prAPI, ...) and reaches it through Env.GitHub
// with use, so a kind adds no method here. Their Find methods answer with
// exactly one of found, absent, unknown or conflict, proving absence only
// with consistent reads; their Create methods return an
// *effect.CreateError whose Class says whether anything may exist.
type GitHub interface {
	Login(ctx context.Context) (string, error)
}

var _ GitHub = (*ghcheck.Client)(nil)

// errLacks is the cause of use's error: the engine's GitHub does not have
// the methods a kind calls (a test fake that serves other kinds).
var errLacks = errors.New("lacks the methods")

// use returns env's GitHub as T, the interface of the ghcheck methods a
// kind calls. When it is not one, its error is a ClassNotSent
// *effect.CreateError wrapping errLacks: nothing was sent.
func use[T any](env *Env) (T, error) {
	g, ok := env.GitHub.(T)
	if !ok {
		return g, &effect.CreateError{Class: effect.ClassNotSent, Err: fmt.Errorf("the engine's GitHub (%T) %w of %T", env.GitHub, errLacks, (*T)(nil))}
	}
	return g, nil
}

// look calls f with env's GitHub as T: unknown, with use's error, when it
// is not one.
func look[T any](env *Env, f func(T) effect.Result) effect.Result {
	g, err := use[T](env)
	if err != nil {
		return effect.Result{State: effect.Unknown, Err: err}
	}
	return f(g)
}

// send calls f with env's GitHub as T: use's error, nothing sent, when it
// is not one.
func send[T any](env *Env, f func(T) (effect.Artifact, error)) (effect.Artifact, error) {
	g, err := use[T](env)
	if err != nil {
		return effect.Artifact{}, err
	}
	return f(g)
}
