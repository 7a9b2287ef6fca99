package offgithub

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/supervise"
	"github.com/ghonce/ghonce/ledger"
)

// Unconfirmed-entry policies for guarded commands.
const (
	// OnUnconfirmedFail: an attempt that may have run is never run again
	// until a person (or --check) settles it. The default.
	OnUnconfirmedFail = "fail"
	// OnUnconfirmedRetry: the command is safe to repeat; run it again.
	OnUnconfirmedRetry = "retry"
)

// Exec guards a side effect ghonce cannot see (Slack, email, a deploy
// hook). The key is exported to both commands as GHONCE_KEY so it can be
// handed to a service that dedupes on it.
//
// Finding it: Check, a shell command, is the user's "does it exist?": exit 0
// means yes (its stdout is stored as the reference), exit 1 no, anything else
// unknown. Without Check, ghonce knows only what its ledger knows: a fresh
// entry in a ledger that was not just created means "not yet run"; an entry
// left attempting by a crash, or any entry in a ledger created by this very
// process (the old one may have been lost), is settled by OnUnconfirmed.
type Exec struct {
	Argv          []string `json:"argv"`
	Check         string   `json:"check,omitempty"`
	OnUnconfirmed string   `json:"on_unconfirmed,omitempty"`
	// Target optionally narrows the key, e.g. a recipient.
	Tgt string `json:"target,omitempty"`
	// PassLedger passes a GHONCE_LEDGER URL (which may hold the ledger's
	// password) on to the command and its check; see childEnv. Not part
	// of the description: toggling it changes no payload.
	PassLedger bool `json:"-"`
}

func init() { register[Exec]() }

func (Exec) Kind() string { return "exec" }

// Face: see effect.Face. A command is not on GitHub: only `ghonce exec` runs one.
func (Exec) Face() effect.Face {
	return effect.Face{
		CLI: []string{"exec"}, Does: "Run a command with a side effect ghonce cannot see",
		Example: `{"argv": ["./notify.sh", "release v1.0.0"], "check": "./notified.sh v1.0.0", "target": "ops"}`,
		Fields: []effect.Field{
			{Name: "argv", Arg: "COMMAND", List: true, Required: true},
			{Name: "check", Help: "shell command that exits 0 if the effect already exists, 1 if not"},
			{Name: "on_unconfirmed", Help: "what to do when an earlier attempt may have run: fail or retry", Default: OnUnconfirmedFail},
			{Name: "target", Help: "narrow the key, e.g. a recipient"},
		},
	}
}
func (x Exec) Target() string { return x.Tgt }

func (Exec) aim(target string) Spec { return Exec{Tgt: target} }

// Unverifiable: without Check nothing can look the command's effect up.
func (x Exec) Unverifiable() bool { return x.Check == "" }

// marksOwnSending: Create marks the attempt as sent once the supervisor has
// started, naming it, so a taker waits for its process tree to be gone.
func (Exec) marksOwnSending() {}

// NotSent: a command that did not start did nothing.
func (Exec) NotSent() string { return "the command did not start, so nothing happened" }
func (x Exec) Validate(string) error {
	if len(x.Argv) == 0 || x.Argv[0] == "" {
		return &effect.InvalidError{Field: "argv", Problem: "is empty", Want: "the command to run and its arguments"}
	}
	switch x.OnUnconfirmed {
	case "", OnUnconfirmedFail, OnUnconfirmedRetry:
	default:
		return &effect.InvalidError{Field: "on_unconfirmed", Problem: fmt.Sprintf("%q is not a policy", x.OnUnconfirmed), Want: "fail or retry"}
	}
	return nil
}

func (x Exec) Find(ctx context.Context, env *Env, key string) effect.Result {
	if x.Check != "" {
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", x.Check)
		cmd.Env = x.childEnv(key)
		cmd.Stdout, cmd.Stderr = &out, env.Stderr
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
			if env.unproven != "" {
				break // found is found, wherever the earlier attempt ran
			}
			return effect.Result{State: effect.Found, Artifact: effect.Artifact{Text: strings.TrimSpace(out.String())}}
		case errors.As(err, &ee) && ee.ExitCode() == 1 && env.unproven != "":
			return x.unprovenResult(env, key)
		case errors.As(err, &ee) && ee.ExitCode() == 1:
			return effect.Result{State: effect.Absent}
		case !errors.As(err, &ee), ee.ExitCode() == 126, ee.ExitCode() == 127:
			// The check itself cannot run (a missing file, a command not
			// found, not executable): asking again will not help.
			return effect.Result{State: effect.Unknown, Err: &checkCannotRun{check: x.Check, err: err}}
		default:
			return effect.Result{State: effect.Unknown, Err: &checkNoAnswer{check: x.Check, err: err}}
		}
	}
	if env.unproven != "" {
		return x.unprovenResult(env, key)
	}
	return findInLedger(env, x.OnUnconfirmed == OnUnconfirmedRetry, func(lost bool) error {
		if lost {
			return errors.New(lostLedger + ", and without --check ghonce cannot tell whether this command already ran (create ledgers ahead with `ghonce init`). " +
				resolveBy(key) + "; or give --check CMD")
		}
		return errors.New("an earlier attempt may have run this command and crashed before recording it; without --check ghonce cannot tell. " +
			resolveBy(key) + "; for a command safe to repeat, pass --on-unconfirmed retry")
	})
}

// findInLedger is Find for an effect nothing can look up, from the ledger
// alone: absent when no attempt can have made it (the entry failed, is
// fresh in an established ledger, or was left with no mark that its create
// started) or when it is safe to repeat (retry);
// otherwise unknown, with the error maybe words (lost: the ledger is
// new, so an earlier one may have been lost).
func findInLedger(env *Env, retry bool, maybe func(lost bool) error) effect.Result {
	switch {
	case env.Prior == ledger.Failed, env.Prior == "" && !env.LedgerNew, env.unstarted:
		return effect.Result{State: effect.Absent}
	case retry:
		return effect.Result{State: effect.Absent}
	}
	return effect.Result{State: effect.Unknown, Err: maybe(env.Prior == "")}
}

// unprovenResult is the answer when an earlier attempt's processes cannot
// be proven gone from here (env.unproven): the policy decides, since a
// check's "no" may come before their effect.
func (x Exec) unprovenResult(env *Env, key string) effect.Result {
	if x.OnUnconfirmed == OnUnconfirmedRetry {
		return effect.Result{State: effect.Absent}
	}
	return effect.Result{State: effect.Unknown, Err: errors.New(env.unproven + ", and its effect may still come after a check says it has not. " +
		"Rerun where it ran, or once it has surely ended: " + resolveBy(key) + "; for a command safe to repeat, pass --on-unconfirmed retry")}
}

// lostLedger is why a ledger this run created cannot say that nothing ran.
const lostLedger = "the ledger was created by this run, so an earlier ledger may have been lost"

// resolveBy is how a person settles key once they know whether it happened.
func resolveBy(key string) string {
	return "`ghonce resolve " + key + " --retry` if it did not happen, `--done` if it did"
}

// checkNoAnswer is a --check that ran and answered neither 0 (it exists)
// nor 1 (it does not): it does not know, which is not "absent".
type checkNoAnswer struct {
	check string
	err   error
}

func (e *checkNoAnswer) Error() string {
	return fmt.Sprintf("check %q: %v: it answered neither yes nor no; a check exits 0 when the effect exists and 1 when it does not", e.check, e.err)
}
func (e *checkNoAnswer) Unwrap() error { return e.err }

// noAnswer reports whether err is a --check that told nothing: it could
// not run (checkCannotRun) or did not know (checkNoAnswer).
func noAnswer(err error) bool {
	var cr *checkCannotRun
	var na *checkNoAnswer
	return errors.As(err, &cr) || errors.As(err, &na)
}

// checkHint is the way out of an entry an earlier attempt left unknown
// whose check cannot answer.
func checkHint(key string) string {
	return "The entry stays \"attempting\" until a check answers: fix --check so that it exits 0 when the effect exists and 1 when it does not, and rerun; " +
		"or settle it yourself: `ghonce resolve " + key + " --done` if it happened, `ghonce resolve " + key + " --retry` if it did not."
}

// checkCannotRun is a --check that could not run at all (exit 126 or 127,
// or /bin/sh could not start): it answered nothing about the command.
type checkCannotRun struct {
	check string
	err   error
}

func (e *checkCannotRun) Error() string {
	return fmt.Sprintf("check %q cannot run: %v (exit 126: not executable, 127: not found); fix --check so that it exits 0 when the effect exists and 1 when it does not", e.check, e.err)
}
func (e *checkCannotRun) Unwrap() error { return e.err }

// Create runs the command. Exit 0 is success; a non-zero exit is the
// command's own word that it did not succeed (failed, retried by a later
// run); death by a signal is "maybe". On Linux the command, and every
// process it starts, runs under a supervisor that kills them all when
// ghonce dies (package supervise); Create returns when all of them have ended.
func (x Exec) Create(ctx context.Context, env *Env, key string) (effect.Artifact, error) {
	c := supervise.Command{Argv: x.Argv, Env: x.childEnv(key), Stdout: env.Stdout, Stderr: env.Stderr}
	if err := supervise.Run(ctx, c, env.mark); err != nil {
		return effect.Artifact{}, err
	}
	return effect.Artifact{}, nil
}

var (
	_ Spec       = Exec{}
	_ ownSending = Exec{}
)
