package cli

import (
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/reconcile"
)

// The JSON objects the verbs print with --json. An acting verb prints a
// reconcile.Result; the ledger verbs print these. Field names are part of
// the interface scripts read: add fields, never rename them.

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
	// History is set by `status KEY` only.
	History []transitionJSON `json:"history,omitempty"`
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
	Entries []entryJSON `json:"entries"`
	// Stale counts the attempting entries older than --stale.
	Stale int `json:"stale"`
}

// reconcileJSON is what `reconcile --json` prints.
type reconcileJSON struct {
	Settled   []reconcile.Settlement `json:"settled"`
	Unsettled int                    `json:"unsettled"`
}
