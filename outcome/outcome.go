// Package outcome is what an action ends with, whichever engine ran it
// (reconcile for GitHub, offgithub for effects GitHub cannot see): its
// Result, what Reconcile did with an entry (Settlement), and the errors of
// an action that did not end done. Both engines return these types, by
// these names; a front maps the errors to exit codes with package failure.
package outcome

import (
	"fmt"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/human"
	"github.com/ghonce/ghonce/ledger"
)

// Outcome says how an action ended.
type Outcome string

const (
	Created Outcome = "created" // this run created the artifact
	Found   Outcome = "found"   // it already existed on GitHub (an earlier attempt made it)
	Skipped Outcome = "skipped" // the ledger said done; GitHub was not asked
)

// Result is what an engine's Do returns and a front prints, whichever
// engine it is.
type Result struct {
	Key            string  `json:"key"`
	Kind           string  `json:"kind"`
	Task           string  `json:"task"`
	Step           string  `json:"step"`
	Repo           string  `json:"repo,omitempty"`
	Outcome        Outcome `json:"outcome"`
	Number         int     `json:"number,omitempty"`
	URL            string  `json:"url,omitempty"`
	ID             int64   `json:"id,omitempty"`
	SHA            string  `json:"sha,omitempty"`
	Ref            string  `json:"ref,omitempty"`
	PayloadChanged bool    `json:"payload_changed"`
	Attempts       int     `json:"attempts"`
	Warning        string  `json:"warning,omitempty"`

	// Changed lists the fields of this run's description that differ from
	// the stored one ("head", "title", "body", ...) when PayloadChanged.
	Changed []string `json:"changed,omitempty"`
	// Updated: --on-change update edited the artifact to this run's
	// description.
	Updated bool `json:"updated,omitempty"`
	// ArtifactState is a PR's or issue's state as GitHub showed it when
	// this run created or found it: open, closed or merged. Empty when
	// GitHub was not asked (skipped) and for kinds without one.
	ArtifactState string `json:"artifact_state,omitempty"`

	// FoundArtifact is the artifact a look-up found (Outcome Found), with
	// its own description: what the engine compares this run's with.
	FoundArtifact *effect.Artifact `json:"-"`
}

// Settlement is what an engine's Reconcile did with one entry.
type Settlement struct {
	Key    string        `json:"key"`
	Kind   string        `json:"kind"`
	Task   string        `json:"task"`
	Step   string        `json:"step"`
	Repo   string        `json:"repo,omitempty"`
	From   ledger.Status `json:"from"`
	To     ledger.Status `json:"to"`
	Number int           `json:"number,omitempty"`
	URL    string        `json:"url,omitempty"`
	// Why explains the decision; for an entry that stays attempting, what a
	// person or a rerun must do.
	Why string `json:"why"`
}

// Settled reports whether the entry left "attempting".
func (s Settlement) Settled() bool { return s.To != ledger.Attempting }

// Progress follows a long Reconcile (the CLI draws a bar on a terminal).
// Calls come from one goroutine at a time.
type Progress interface {
	// Start says how many entries will be settled.
	Start(total int)
	// Settled reports one entry settled (or left attempting).
	Settled(s Settlement)
}

// UnconfirmedError means the action may or may not have taken effect and
// ghonce could not find out; the entry stays attempting. Exit code 3.
type UnconfirmedError struct {
	Key  string
	Err  error
	Hint string
}

func (e *UnconfirmedError) Error() string {
	msg := fmt.Sprintf("unconfirmed %s: %v", e.Key, e.Err)
	if e.Hint != "" {
		msg += "\n" + e.Hint
	}
	return msg
}
func (e *UnconfirmedError) Unwrap() error { return e.Err }

// InProgressError means another attempt holds the key under a live lease.
// Exit code 4.
type InProgressError struct {
	Key string
	// Holder is whose claim it is, as the claim records it: its ID is
	// opaque, its host and PID are what the holder wrote.
	Holder ledger.Owner
	Waited time.Duration
	// Since is when the holder claimed the key, Until when its lease ends
	// unless it renews it (the ledger's clock); zero when not known. Left
	// is how long the lease had to run when the claim gave up.
	Since, Until time.Time
	Left         time.Duration
	// Here: the holder is a process of this machine that runs. Otherwise
	// it is on another machine (or boot, or PID namespace), where nothing
	// tells a dead holder from a live one before its lease ends.
	Here bool
}

func (e *InProgressError) Error() string {
	switch {
	case e.Holder.ID == "":
		return fmt.Sprintf("in progress elsewhere: %s is held by a running attempt; rerun later", e.Key)
	case e.Here:
		return fmt.Sprintf("in progress elsewhere: %s is held by process %d of this machine, which runs (waited %s); rerun once it has finished",
			e.Key, e.Holder.PID, human.Duration(e.Waited))
	}
	msg := fmt.Sprintf("in progress elsewhere: %s is held by %s", e.Key, e.Holder.ID)
	if e.Holder.Host != "" {
		msg += fmt.Sprintf(" (process %d on %s, as its claim says)", e.Holder.PID, e.Holder.Host)
	}
	if !e.Since.IsZero() {
		msg += ", claimed " + stamp(e.Since)
	}
	msg += fmt.Sprintf(" (waited %s). ", human.Duration(e.Waited))
	msg += "ghonce cannot see whether a holder on another machine still runs"
	if e.Until.IsZero() {
		return msg + ": rerun later"
	}
	return msg + fmt.Sprintf(": its lease ends %s (in %s) unless it renews it, and a rerun after that takes the key over if it died",
		stamp(e.Until), human.Duration(e.Left))
}

// WaitPast is a wait that outlasts the holder's lease, for advice: what
// was left of it, rounded up to the next half minute, and half a minute
// more; 0 when nothing is known of it (a holder of this machine is
// waited for as long as it runs).
func (e *InProgressError) WaitPast() time.Duration {
	if e.Here || e.Until.IsZero() {
		return 0
	}
	return (e.Left + 30*time.Second - 1).Truncate(30*time.Second) + 30*time.Second
}

// stamp is t for a message: UTC, to the second.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ConflictError means the artifact's name is taken by something that is not
// ours. Nothing was created. Exit code 1.
type ConflictError struct {
	Key string
	Err error
	// DoneUnproven: the ledger records the key as done, and GitHub shows
	// no artifact of ours with it. Forcing the entry back to failed
	// (ledger.ResolveParams.Force) lets the next run act.
	DoneUnproven bool
}

func (e *ConflictError) Error() string { return fmt.Sprintf("conflict for %s: %v", e.Key, e.Err) }
func (e *ConflictError) Unwrap() error { return e.Err }

// LedgerUnavailableError means the ledger could not be reached, or lost
// its connection, during an action (ledger.ErrUnavailable: a Postgres
// restart). Sent says whether this attempt may have sent its create; when
// not, nothing of this attempt reached GitHub. The engine returns it
// inside an *UnconfirmedError (exit 3): a rerun once the ledger answers
// settles it.
type LedgerUnavailableError struct {
	Key  string
	Sent bool
	Err  error
}

func (e *LedgerUnavailableError) Error() string {
	if e.Sent {
		return fmt.Sprintf("the ledger became unavailable after the create of %s was sent: %v; rerun once it answers: the rerun finds what was made", e.Key, e.Err)
	}
	return fmt.Sprintf("the ledger is unavailable: %v; nothing was sent to GitHub for %s by this run; rerun once it answers", e.Err, e.Key)
}
func (e *LedgerUnavailableError) Unwrap() error { return e.Err }

// NotSentError means GitHub could not be reached at all (a refused
// connection, a host that does not resolve, a TLS handshake that failed):
// no request left, so nothing was created. An entry this attempt created,
// or a failed one it retried, is failed; one an earlier attempt left
// attempting stays so, since that
// attempt's outcome is still unknown, and the engine returns the
// NotSentError inside an *UnconfirmedError (exit 3). Exit code 1.
type NotSentError struct {
	Key string
	// Ledger is true when it was the ledger that could not be written
	// (the mark of a create about to leave): the create was not sent.
	Ledger bool
	// Attempting is true when the entry stays attempting (an earlier
	// attempt's outcome is still to be settled).
	Attempting bool
	Err        error
}

// apiRoot is where each front sets the API root.
const apiRoot = "the API root (GITHUB_API_URL for the CLI, ghcheck.Options.BaseURL from Go; GitHub Enterprise: https://HOST/api/v3)"

func (e *NotSentError) Error() string {
	if e.Ledger {
		return fmt.Sprintf("the ledger could not record that the create of %s was about to be sent: %v; nothing was sent for this attempt", e.Key, e.Err)
	}
	msg := fmt.Sprintf("cannot reach GitHub for %s: %v; nothing was sent, so nothing was created. Check %s, the network and any proxy", e.Key, e.Err, apiRoot)
	if e.Attempting {
		msg += "; the entry stays \"attempting\" for the earlier attempt: rerun once GitHub is reachable"
	}
	return msg
}
func (e *NotSentError) Unwrap() error { return e.Err }
