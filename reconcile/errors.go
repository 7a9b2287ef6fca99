package reconcile

import (
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/outcome"
)

// UnconfirmedError means the action may or may not have taken effect and
// ghonce could not find out; the entry stays attempting. Exit code 3.
// Fields: Key, Err (why, unwrapped by errors.Is and errors.As) and Hint
// (the next step, printed on its own line).
type UnconfirmedError = outcome.UnconfirmedError

// InProgressError means another attempt holds the key under a live lease.
// Exit code 4. Fields: Key, Holder (whose claim: an opaque ID, and the host
// and PID it recorded), Waited (how long this one waited for it), Since
// and Until (its claim, and when its lease ends unless renewed), Left (of
// that lease, when this one gave up) and Here (the holder runs on this
// machine; otherwise nothing tells a dead holder from a live one before its
// lease ends). WaitPast is a wait that outlasts the lease.
type InProgressError = outcome.InProgressError

// ConflictError means the artifact's name is taken by something that is not
// ours. Nothing was created. Exit code 1.
//
// DoneUnproven is true when the ledger records the key as done, and
// GitHub shows no artifact of ours with it. Forcing the entry back to
// failed (ledger.ResolveParams.Force) lets the next run act.
type ConflictError = outcome.ConflictError

// LedgerUnavailableError means the ledger could not be reached, or lost
// its connection, during an action (ledger.ErrUnavailable: a Postgres
// restart). Sent says whether this attempt may have sent its create; when
// not, nothing of this attempt reached GitHub. The engine returns it
// inside an *UnconfirmedError (exit 3): a rerun once the ledger answers
// settles it.
type LedgerUnavailableError = outcome.LedgerUnavailableError

// NotSentError means GitHub could not be reached at all (a refused
// connection, a host that does not resolve, a TLS handshake that failed):
// no request left, so nothing was created. An entry this attempt created,
// or a failed one it retried, is failed; one an earlier attempt left
// attempting stays so, since that attempt's outcome is still unknown, and
// the engine returns the NotSentError inside an *UnconfirmedError (exit
// 3). Exit code 1.
//
// Ledger is true when it was the ledger that could not be written (the
// mark of a create about to leave): the create was not sent. Attempting
// is true when the entry stays attempting.
type NotSentError = outcome.NotSentError

// refusal is a look-up's answer that the description cannot be acted on as
// given (a start ref that names no commit): nothing was created, and the
// same description is refused again until it is fixed. The entry fails.
type refusal struct{ err error }

func (e *refusal) Error() string { return e.err.Error() }
func (e *refusal) Unwrap() error { return e.err }

// Outcomes of an action that ended in an error, as metrics and traces name
// them (beside Created, Found and Skipped).
const (
	OutcomeRefused     = once.OutcomeRefused     // GitHub refused, or the name is taken by something not ours: nothing was created
	OutcomeUnconfirmed = once.OutcomeUnconfirmed // it may have happened: the entry stays attempting
	OutcomeInProgress  = once.OutcomeInProgress  // another live process holds the key
	OutcomeError       = once.OutcomeError       // anything else (the ledger, the configuration)
)

// OutcomeOf names how an action ended: its Result's outcome, or one of the
// error outcomes above.
func OutcomeOf(r *Result, err error) string { return once.OutcomeOf(r, err) }
