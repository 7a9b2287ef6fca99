package github

// How an entry is written in a commit message.

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

// version is the format of the documents this build writes; a newer one
// is refused (ledger.ErrNewerSchema).
const version = 1

// self stands, while an entry is composed, for "when the commit that
// stores it is made": GitHub dates the commit, and the document keeps such
// a time relative to the commit's date. Real times are nowhere near it.
var self = time.Date(9000, time.January, 1, 0, 0, 0, 0, time.UTC)

// stamp is a stored time: "" for zero, "c" and a signed offset in
// milliseconds from the commit's date ("c60000"), or RFC 3339 absolute.
type stamp string

func stampOf(t time.Time) stamp {
	switch {
	case t.IsZero():
		return ""
	case t.Year() >= 8000:
		return stamp("c" + strconv.FormatInt(t.Sub(self).Milliseconds(), 10))
	}
	return stamp(t.UTC().Format(time.RFC3339Nano))
}

func (s stamp) at(commit time.Time) (time.Time, error) {
	switch {
	case s == "":
		return time.Time{}, nil
	case strings.HasPrefix(string(s), "c"):
		ms, err := strconv.ParseInt(string(s[1:]), 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("bad time %q", s)
		}
		return commit.Add(time.Duration(ms) * time.Millisecond), nil
	}
	return time.Parse(time.RFC3339Nano, string(s))
}

type entryDoc struct {
	Key         string       `json:"key"`
	Task        string       `json:"task,omitempty"`
	Step        string       `json:"step,omitempty"`
	Kind        string       `json:"kind,omitempty"`
	Repo        string       `json:"repo,omitempty"`
	Target      string       `json:"target,omitempty"`
	Payload     []byte       `json:"payload,omitempty"`
	PayloadHash string       `json:"payload_hash,omitempty"`
	Status      string       `json:"status"`
	Outcome     string       `json:"outcome,omitempty"`
	Ref         ledger.Ref   `json:"ref,omitzero"`
	Owner       ledger.Owner `json:"owner,omitzero"`
	LeaseUntil  stamp        `json:"lease_until,omitempty"`
	Fence       int64        `json:"fence"`
	Attempts    int          `json:"attempts"`
	SendingAt   stamp        `json:"sending_at,omitempty"`
	SendingProc ledger.Proc  `json:"sending_proc,omitzero"`
	LastError   string       `json:"last_error,omitempty"`
	CreatedAt   stamp        `json:"created_at"`
	UpdatedAt   stamp        `json:"updated_at"`
}

type transitionDoc struct {
	At    stamp  `json:"at"`
	Owner string `json:"owner"`
	From  string `json:"from,omitempty"`
	To    string `json:"to"`
	Fence int64  `json:"fence"`
	Why   string `json:"why,omitempty"`
}

// document is what a claim's commit says: the entry as of that commit and
// every transition that led to it.
type document struct {
	V       int             `json:"ghonce_ledger"`
	Entry   entryDoc        `json:"entry"`
	History []transitionDoc `json:"history"`
}

// record is a decoded document: the entry and its history with every time
// resolved against the commit's date.
type record struct {
	entry   *ledger.Entry
	history []ledger.Transition
}

func encode(e *ledger.Entry, history []ledger.Transition) string {
	d := document{V: version, Entry: entryDoc{
		Key: e.Key, Task: e.Task, Step: e.Step, Kind: e.Kind, Repo: e.Repo, Target: e.Target,
		Payload: e.Payload, PayloadHash: e.PayloadHash, Status: string(e.Status), Outcome: e.Outcome,
		Ref: e.Ref, Owner: e.Owner, LeaseUntil: stampOf(e.LeaseUntil), Fence: e.Fence, Attempts: e.Attempts,
		SendingAt: stampOf(e.Sending.At), SendingProc: e.Sending.Proc, LastError: e.LastError,
		CreatedAt: stampOf(e.CreatedAt), UpdatedAt: stampOf(e.UpdatedAt),
	}}
	for _, t := range history {
		d.History = append(d.History, transitionDoc{At: stampOf(t.At), Owner: t.Owner, From: string(t.From), To: string(t.To), Fence: t.Fence, Why: t.Why})
	}
	b, err := json.Marshal(d)
	if err != nil {
		panic(err) // every field is a plain value
	}
	// The first line is for a person looking at the ref with git.
	return fmt.Sprintf("ghonce ledger: %s, fence %d\n\n%s\n", e.Status, e.Fence, b)
}

func decode(message string, date time.Time) (*record, error) {
	_, body, ok := strings.Cut(message, "\n\n")
	if !ok {
		return nil, fmt.Errorf("%w: the commit is not a ghonce ledger entry", ledger.ErrNotLedger)
	}
	var d document
	if err := json.Unmarshal([]byte(strings.TrimSpace(body)), &d); err != nil || d.V == 0 {
		return nil, fmt.Errorf("%w: the commit is not a ghonce ledger entry", ledger.ErrNotLedger)
	}
	if d.V > version {
		return nil, fmt.Errorf("%w (format %d; this ghonce reads up to %d): upgrade ghonce", ledger.ErrNewerSchema, d.V, version)
	}
	x := d.Entry
	e := &ledger.Entry{
		Key: x.Key, Task: x.Task, Step: x.Step, Kind: x.Kind, Repo: x.Repo, Target: x.Target,
		Payload: x.Payload, PayloadHash: x.PayloadHash, Status: ledger.Status(x.Status), Outcome: x.Outcome,
		Ref: x.Ref, Owner: x.Owner, Fence: x.Fence, Attempts: x.Attempts, LastError: x.LastError,
	}
	e.Sending.Proc = x.SendingProc
	var err error
	for _, f := range []struct {
		s stamp
		t *time.Time
	}{{x.LeaseUntil, &e.LeaseUntil}, {x.SendingAt, &e.Sending.At}, {x.CreatedAt, &e.CreatedAt}, {x.UpdatedAt, &e.UpdatedAt}} {
		if *f.t, err = f.s.at(date); err != nil {
			return nil, fmt.Errorf("%w: %v", ledger.ErrNotLedger, err)
		}
	}
	if !e.Status.Valid() || e.Key == "" {
		return nil, fmt.Errorf("%w: the entry has no key or status %q", ledger.ErrNotLedger, x.Status)
	}
	r := &record{entry: e}
	for _, t := range d.History {
		at, err := t.At.at(date)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ledger.ErrNotLedger, err)
		}
		r.history = append(r.history, ledger.Transition{Key: e.Key, At: at, Owner: t.Owner, From: ledger.Status(t.From), To: ledger.Status(t.To), Fence: t.Fence, Why: t.Why})
	}
	return r, nil
}
