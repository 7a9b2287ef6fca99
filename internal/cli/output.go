package cli

import (
	"time"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
)

// The JSON objects the verbs print with --json. An acting verb prints a
// outcome.Result; the ledger verbs print these. Each starts with
// OutcomeJSON; a failed run prints a failure.Failure instead. Field names
// are part of the interface scripts read: add fields, never rename them.

// entryJSON is one ledger entry (status, resolve).
type entryJSON struct {
	Key       string        `json:"key"`
	Status    ledger.Status `json:"status"`
	Kind      string        `json:"kind"`
	Task      string        `json:"task"`
	Step      string        `json:"step"`
	Repo      string        `json:"repo"`
	Target    string        `json:"target"`
	Outcome   string        `json:"outcome"`
	Number    int           `json:"number"`
	URL       string        `json:"url"`
	ID        int64         `json:"id"`
	SHA       string        `json:"sha"`
	Ref       string        `json:"ref"`
	Attempts  int           `json:"attempts"`
	LastError string        `json:"last_error"`
	CreatedAt time.Time     `json:"created_at"`
	UpdatedAt time.Time     `json:"updated_at"`
	// Holder is set while a live lease holds the entry (status only).
	Holder *holderJSON `json:"holder,omitempty"`
	// History is set by `status KEY` only.
	History []transitionJSON `json:"history,omitempty"`
}

// holderJSON is the process a live lease names, and what this machine can
// tell of it (holderState).
type holderJSON struct {
	ID         string    `json:"id"`
	Host       string    `json:"host"`
	PID        int       `json:"pid"`
	LeaseUntil time.Time `json:"lease_until"`
	State      string    `json:"state"` // running, dead or unknown
}

func newEntryJSON(e *ledger.Entry) entryJSON {
	return entryJSON{
		Key: e.Key, Status: e.Status, Kind: e.Kind, Task: e.Task, Step: e.Step, Repo: e.Repo, Target: e.Target,
		Outcome: e.Outcome, Number: e.Ref.Number, URL: e.Ref.URL, ID: e.Ref.ID, SHA: e.Ref.SHA, Ref: e.Ref.Text,
		Attempts: e.Attempts, LastError: e.LastError, CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
	}
}

// transitionJSON is one line of an entry's history.
type transitionJSON struct {
	At    time.Time     `json:"at"`
	Owner string        `json:"owner"`
	From  ledger.Status `json:"from"`
	To    ledger.Status `json:"to"`
	Fence int64         `json:"fence"`
	Why   string        `json:"why"`
}

// statusJSON is what `status --json` prints.
type statusJSON struct {
	cmdutil.OutcomeJSON
	// Key and State are set by `status KEY`.
	Key     string      `json:"key,omitempty"`
	State   string      `json:"state,omitempty"`
	Entries []entryJSON `json:"entries"`
	// Stale counts the attempting entries older than --stale; with
	// --stale, Entries holds only those.
	Stale int `json:"stale"`
	// Counts is the number of listed entries per status.
	Counts map[ledger.Status]int `json:"counts"`
	// Error and Next are set on exit 5.
	Error *failure.Error `json:"error,omitempty"`
	Next  string         `json:"next,omitempty"`
}

// reconcileJSON is what `reconcile --json` prints.
type reconcileJSON struct {
	cmdutil.OutcomeJSON
	Settled   []outcome.Settlement `json:"settled"`
	Unsettled int                  `json:"unsettled"`
	// Error and Next are set on exit 3.
	Error *failure.Error `json:"error,omitempty"`
	Next  string         `json:"next,omitempty"`
}

// resolveJSON is what `resolve --json` prints.
type resolveJSON struct {
	cmdutil.OutcomeJSON
	State ledger.Status `json:"state"`
	entryJSON
}

// keyJSON is what `key --json` prints.
type keyJSON struct {
	cmdutil.OutcomeJSON
	Key string `json:"key"`
}

// branchNameJSON is what `branch name --json` prints.
type branchNameJSON struct {
	cmdutil.OutcomeJSON
	Branch string `json:"branch"`
}

// initJSON is what `init --json` prints.
type initJSON struct {
	cmdutil.OutcomeJSON
	Ledger  string `json:"ledger"`
	Created bool   `json:"created"`
}
