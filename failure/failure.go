// Package failure maps an error from ghonce's engine, ledger or GitHub
// layer, by its type, to what a caller acts on: an exit code, a kind, the
// key and the entry's state when they are known, and the next step that
// settles it. The ghonce command prints it as the one JSON object of a
// failed run, and its MCP server and GitHub Action use the same mapping
// (Describe), so each speaks of the same failure in the same words.
//
// A program that runs the library in a job system of its own (a CI step,
// a task runner's adapter) uses it to exit, retry or page as the command
// would: exit codes are stable, and Kind says what to do without reading
// a message. Next speaks in ghonce commands (`ghonce reconcile`, ...),
// which a person can run against the same ledger.
package failure

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/appauth"
	"github.com/ghonce/ghonce/internal/human"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// Exit codes. Scripts depend on them; keep them stable.
const (
	ExitOK          = 0 // success: created, found or skipped
	ExitError       = 1 // an error: GitHub refused, a conflict, a broken ledger
	ExitUsage       = 2 // bad flags or input, a missing token
	ExitUnconfirmed = 3 // needs a rerun or a person: the outcome could not be confirmed
	ExitInProgress  = 4 // another process holds the same key
	ExitStale       = 5 // status --stale found attempting entries older than the limit
	ExitDuplicates  = 6 // audit found open duplicates (after --apply: left open)
	// ExitSameOrAnother: the key is done from another text, and only the
	// caller can say whether this run is that act again (nothing to do)
	// or another one (use Failure.NewStep). Nothing was created.
	ExitSameOrAnother = 7
)

// Kind names what went wrong, for a program deciding what to do.
type Kind string

const (
	Usage       Kind = "usage"       // bad flags or input (exit 2)
	Credentials Kind = "credentials" // no token (exit 2), or one GitHub rejects (exit 1)
	Refused     Kind = "refused"     // GitHub refused; nothing was created (exit 1)
	Conflict    Kind = "conflict"    // the name is taken by something not ours (exit 1)
	Ledger      Kind = "ledger"      // the ledger cannot be opened or used (exit 1)
	Unconfirmed Kind = "unconfirmed" // it may have happened; not confirmed (exit 3)
	InProgress  Kind = "in_progress" // another process holds the key (exit 4)
	Stale       Kind = "stale"       // attempting entries older than status --stale's limit (exit 5)
	// SameOrAnother: the key is done from another text; the caller says
	// which act this run is (exit 7).
	SameOrAnother Kind = "same_or_another"
	Other         Kind = "error" // anything else (exit 1)
)

// Error is the "error" object of a failure.
type Error struct {
	Kind    Kind   `json:"kind"`
	Message string `json:"message"`
	// HTTPStatus and Field are set when GitHub said so; Field also for
	// bad input that names one (*reconcile.InvalidError), by its wire name.
	HTTPStatus int    `json:"http_status,omitempty"`
	Field      string `json:"field,omitempty"`
}

// Failure is the one JSON object a failed run prints with --json.
type Failure struct {
	OK       bool   `json:"ok"` // always false
	ExitCode int    `json:"exit_code"`
	Key      string `json:"key,omitempty"`
	// State is the entry's status in the ledger after the run (attempting,
	// done, failed), when there is an entry.
	State string `json:"state,omitempty"`
	Error Error  `json:"error"`
	// Next is the command or action that settles it.
	Next string `json:"next"`
	// Existing, Text and NewStep are set for kind same_or_another: the
	// artifact the key made, this run's text, and the step for another act.
	Existing *Existing `json:"existing,omitempty"`
	Text     string    `json:"text,omitempty"`
	NewStep  string    `json:"new_step,omitempty"`
}

// Existing is the artifact a key made, as a same_or_another failure names
// it: its text (a title, or a body's opening line) and when it was made.
type Existing struct {
	URL    string     `json:"url,omitempty"`
	Number int        `json:"number,omitempty"` // a PR's or issue's
	ID     int64      `json:"id,omitempty"`     // a comment's
	Text   string     `json:"text"`
	MadeAt *time.Time `json:"made_at,omitempty"`
}

// UsageError marks bad input: exit 2. Any error in the chain with a
// Usage() bool method that returns true counts as one.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }
func (e *UsageError) Usage() bool   { return true }

type usage interface{ Usage() bool }

func isUsage(err error) bool {
	var u usage
	return errors.As(err, &u) && u.Usage()
}

// Usagef is a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{fmt.Errorf(format, args...)}
}

// MissingCredentials marks a run that has no token or App key to use:
// exit 2, kind credentials.
type MissingCredentials struct{ Err error }

func (e *MissingCredentials) Error() string { return e.Err.Error() }
func (e *MissingCredentials) Unwrap() error { return e.Err }

// LedgerError marks an error opening or using the ledger: kind ledger.
type LedgerError struct{ Err error }

func (e *LedgerError) Error() string { return e.Err.Error() }
func (e *LedgerError) Unwrap() error { return e.Err }

// Keyed carries the key an error happened under and the entry's state
// after it, for errors raised once a key was derived.
type Keyed struct {
	Key   string
	State ledger.Status // "" when there is no entry
	Err   error
}

func (e *Keyed) Error() string { return e.Err.Error() }
func (e *Keyed) Unwrap() error { return e.Err }

// Describe says what err means to a caller. verb is the command that
// failed ("pr create"), for the usage hint; "" names ghonce itself. Next
// names the options it advises in w, the caller's words (nil is
// effect.GoWords).
func Describe(err error, verb string, w effect.Words) Failure {
	f := Failure{ExitCode: ExitError, Error: Error{Kind: Other, Message: Say(err, w)}}
	if err == nil {
		return f
	}
	var (
		keyed *Keyed
		mc    *MissingCredentials
		uc    *outcome.UnconfirmedError
		ip    *outcome.InProgressError
		cf    *outcome.ConflictError
		ce    *effect.CreateError
		le    *LedgerError
		ae    *appauth.Error
		inv   *reconcile.InvalidError
		so    *reconcile.SameOrAnotherError
	)
	if errors.As(err, &keyed) {
		f.Key, f.State = keyed.Key, string(keyed.State)
	}
	kind, code := Other, ExitError
	switch {
	case isUsage(err), errors.As(err, &inv):
		kind, code = Usage, ExitUsage
	case errors.As(err, &mc):
		kind, code = Credentials, ExitUsage
	case errors.As(err, &uc):
		kind, code = Unconfirmed, ExitUnconfirmed
		f.Key = firstOf(f.Key, uc.Key)
		f.State = firstOf(f.State, string(ledger.Attempting))
	case errors.As(err, &ip):
		kind, code = InProgress, ExitInProgress
		f.Key = firstOf(f.Key, ip.Key)
		f.State = firstOf(f.State, string(ledger.Attempting))
	case errors.As(err, &so):
		kind, code = SameOrAnother, ExitSameOrAnother
		f.Key, f.State = firstOf(f.Key, so.Key), string(ledger.Done)
		f.Existing = &Existing{URL: so.Result.URL, Number: so.Result.Number, ID: so.Result.ID, Text: so.Existing}
		if !so.Made.IsZero() {
			at := so.Made.UTC()
			f.Existing.MadeAt = &at
		}
		f.Text, f.NewStep = so.Text, so.NewStep
	case errors.As(err, &cf):
		kind = Conflict
		f.Key = firstOf(f.Key, cf.Key)
	case errors.Is(err, ghcheck.ErrCredentials), errors.As(err, &ae), githubStatus(err) == 401:
		kind = Credentials
	case errors.As(err, &le), errors.Is(err, ledger.ErrNotLedger), errors.Is(err, ledger.ErrNewerSchema),
		errors.Is(err, ledger.ErrNotFound), errors.Is(err, ledger.ErrFenced):
		kind = Ledger
	case errors.As(err, &ce) && (ce.Class == effect.ClassRefused || ce.Class == effect.ClassNotSent):
		kind = Refused
	case githubStatus(err)/100 == 4:
		kind = Refused
	}
	f.ExitCode, f.Error.Kind = code, kind
	if ae != nil {
		f.Error.HTTPStatus = ae.Status
	}
	if inv != nil {
		f.Error.Field = inv.Field // the wire name of the field at fault
	}
	if st, field := githubAnswer(err); st != 0 {
		f.Error.HTTPStatus, f.Error.Field = st, field
	}
	f.Next = next(kind, err, f.Key, verb, effect.WordsOr(w))
	return f
}

// Message is err's text for a person, without a trailing newline, its
// advice said as a Go caller gives options (Say with effect.GoWords).
func Message(err error) string { return Say(err, nil) }

// In is err said in w (Say), as an error that unwraps to err: what a
// front hands on, rather than prints, says it so.
func In(err error, w effect.Words) error {
	if err == nil {
		return nil
	}
	if msg := Say(err, w); msg != err.Error() {
		return &said{msg: msg, err: err}
	}
	return err
}

type said struct {
	msg string
	err error
}

func (e *said) Error() string { return e.msg }
func (e *said) Unwrap() error { return e.err }

// sayer is an error a front says in its own words: an *effect.AdviceError
// (its next step), a *reconcile.ChangedError or *reconcile.SameOrAnotherError
// (their remedies).
type sayer interface {
	error
	In(w effect.Words) string
}

// Say is err's text for a person in w, the words of the front that reports
// it (nil is effect.GoWords): the first error in its chain that a front
// says in its own words is said in w where its text stands. Each front
// calls it once, through Describe or where it prints an error itself.
func Say(err error, w effect.Words) string {
	if err == nil {
		return ""
	}
	msg := strings.TrimRight(err.Error(), "\n")
	var s sayer
	if !errors.As(err, &s) {
		return msg
	}
	w = effect.WordsOr(w)
	if at := s.Error(); at != "" && strings.Contains(msg, at) {
		return strings.Replace(msg, at, s.In(w), 1)
	}
	if a, ok := s.(*effect.AdviceError); ok { // a wrapper reworded it
		return msg + ": " + a.Next(w)
	}
	return msg
}

// Next is the step that settles a failure of kind for key ("" when no
// key is known), as Describe's Failure.Next says it.
func Next(kind Kind, key string) string { return next(kind, nil, key, "", effect.GoWords{}) }

func next(kind Kind, err error, key, verb string, w effect.Words) string {
	k := key
	if k == "" {
		k = "KEY"
	}
	switch kind {
	case Usage:
		return fmt.Sprintf("fix the arguments; see `%s --help`", strings.TrimSpace("ghonce "+verb))
	case Credentials:
		if errors.Is(err, ghcheck.ErrCredentials) || githubStatus(err) == 401 {
			return "give a token GitHub accepts (GH_TOKEN or GITHUB_TOKEN), or " + w.Name(effect.Option{Name: "trust-author", Value: "LOGIN"}) + " for a token that cannot read /user; then rerun"
		}
		return "set GH_TOKEN or GITHUB_TOKEN (or configure a GitHub App), then rerun"
	case Refused:
		return "nothing was created: fix what GitHub refused (see error.message), then rerun the same command"
	case Conflict:
		if cf := (*outcome.ConflictError)(nil); errors.As(err, &cf) && cf.DoneUnproven {
			// Not a name taken: a done entry GitHub does not confirm.
			return fmt.Sprintf("check why GitHub has none (deleted, or someone who can push there wrote the entry); to act again: `ghonce resolve %s --retry --force`, then rerun", k)
		}
		return "the name is taken by an artifact that is not ours: remove or rename it, or use another " + w.Name(effect.Option{Name: "step"}) + "; then rerun"
	case Ledger:
		if errors.Is(err, ledger.ErrNotFound) {
			return "check the key with `ghonce status`"
		}
		return "check the ledger location (" + w.Name(effect.Option{Name: "ledger"}) + ") and see error.message; a person is needed"
	case Unconfirmed:
		return fmt.Sprintf("rerun the same command, or `ghonce reconcile`; if it stays unconfirmed: `ghonce status %s`, then `ghonce resolve %s --done` or `--retry`", k, k)
	case InProgress:
		wait := w.Name(effect.Option{Name: "wait"})
		if ip := (*outcome.InProgressError)(nil); errors.As(err, &ip) && ip.WaitPast() > 0 {
			// A holder on another machine may be dead: only its lease's
			// end tells, and a wait past it takes the key over then.
			s := fmt.Sprintf("rerun after %s, when its lease ends (the key is taken over then if its holder died)", ip.Until.UTC().Format(time.RFC3339))
			if wait != "" {
				s += ", or wait for it: " + w.Name(effect.Option{Name: "wait", Value: human.Duration(ip.WaitPast())})
			}
			return s
		}
		if wait != "" {
			return "wait and rerun the same command (or raise " + wait + ")"
		}
		return "wait and rerun the same command"
	case SameOrAnother:
		step := ""
		if so := (*reconcile.SameOrAnotherError)(nil); errors.As(err, &so) {
			step = so.NewStep
		}
		return "if this run is that act again, it is done: nothing to do; if it is another, rerun with " + w.Name(effect.Option{Name: "step", Value: step})
	case Stale:
		return "run `ghonce reconcile`; for what stays attempting a person decides: `ghonce status KEY`, then `ghonce resolve KEY --done` or `--retry`"
	}
	return "see error.message; rerun once the cause is fixed"
}

// githubAnswer is the HTTP status and the first field GitHub named, as
// ghcheck hands them over (*ghcheck.ResponseError); 0 when GitHub did not
// answer.
func githubAnswer(err error) (int, string) {
	var re *ghcheck.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode, re.Field
	}
	return 0, ""
}

func githubStatus(err error) int {
	st, _ := githubAnswer(err)
	return st
}

func firstOf(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
