package github

// How an entry is written in a commit message.
//
// A claim is public to whoever can read the repository (on a public one,
// anyone), and a commit outlives its ref. So a claim holds only what a
// lock and a record need (format 2): the key, the kind, the status and
// outcome, the fence and attempts, the lease, the in-flight mark's time,
// GitHub's times, an opaque holder, the artifact's reference (number, id,
// URL, SHA) and digests: of the payload, and of the task and the
// repository (so a listing can be narrowed by them). No payload, task,
// step, repository, target, error text, check output, host name or
// process id. A holder's process identity is sealed with a key only its
// own machine (boot) and PID namespace can derive, so a runner there can
// still prove the holder gone, and any other reader learns nothing.
//
// Format 1 (an entry written by an earlier version, payload and all) is
// still read; the next write of its key is in format 2.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

// version is the format of the documents this build writes; a newer one
// is refused (ledger.ErrNewerSchema).
const version = 2

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

// refDoc is the artifact's reference as a claim keeps it: a guarded
// command's Text (what its check printed) is not kept.
type refDoc struct {
	Number int    `json:"number,omitempty"`
	ID     int64  `json:"id,omitempty"`
	URL    string `json:"url,omitempty"`
	SHA    string `json:"sha,omitempty"`
}

type entryDoc struct {
	Key         string `json:"key"`
	Kind        string `json:"kind,omitempty"`
	PayloadHash string `json:"payload_hash,omitempty"`
	Status      string `json:"status"`
	Outcome     string `json:"outcome,omitempty"`
	Ref         refDoc `json:"ref,omitzero"`
	LeaseUntil  stamp  `json:"lease_until,omitempty"`
	Fence       int64  `json:"fence"`
	Attempts    int    `json:"attempts"`
	SendingAt   stamp  `json:"sending_at,omitempty"`
	CreatedAt   stamp  `json:"created_at"`
	UpdatedAt   stamp  `json:"updated_at"`

	// Format 2: the holder, opaque (holderID), and the holder's and the
	// in-flight command's process identities, sealed (sealProc); the
	// digests of the task and the repository (digest).
	Holder     string `json:"holder,omitempty"`
	HolderProc string `json:"holder_proc,omitempty"`
	SendingBy  string `json:"sending_by,omitempty"`
	TaskDigest string `json:"task_digest,omitempty"`
	RepoDigest string `json:"repo_digest,omitempty"`
}

// v1Fields are what format 1 kept besides format 2's fields; read, never
// written.
type v1Fields struct {
	Task        string       `json:"task,omitempty"`
	Step        string       `json:"step,omitempty"`
	Repo        string       `json:"repo,omitempty"`
	Target      string       `json:"target,omitempty"`
	Payload     []byte       `json:"payload,omitempty"`
	Ref         ledger.Ref   `json:"ref,omitzero"`
	Owner       ledger.Owner `json:"owner,omitzero"`
	SendingProc ledger.Proc  `json:"sending_proc,omitzero"`
	LastError   string       `json:"last_error,omitempty"`
}

// transitionDoc is one line of the history: when, from what to what,
// under which fence, and a why that says nothing of the work (ledger.PublicWhy).
// Format 1 also kept who and every why (read, never written).
type transitionDoc struct {
	At    stamp  `json:"at"`
	Owner string `json:"owner,omitempty"`
	From  string `json:"from,omitempty"`
	To    string `json:"to"`
	Fence int64  `json:"fence"`
	Why   string `json:"why,omitempty"`
}

// document is what a claim's commit says: the entry as of that commit and
// every transition that led to it.
type document struct {
	V       int             `json:"ghonce_ledger"`
	Entry   json.RawMessage `json:"entry"`
	History []transitionDoc `json:"history"`
}

// record is a decoded document: the entry and its history with every time
// resolved against the commit's date, and the sealed process identities
// (opened by the reader that can).
type record struct {
	entry   *ledger.Entry
	history []ledger.Transition
	// holderProc and sendingBy are the sealed identities of format 2.
	holderProc, sendingBy string
	// digests are the task's and the repository's (digest).
	digests digests
}

// digests are an entry's task and repository, as a claim keeps them.
type digests struct{ task, repo string }

// digestsOf are e's digests, or keep's for what e does not name (an entry
// read from a claim names no task or repository).
func digestsOf(e *ledger.Entry, keep digests) digests {
	if e.Task != "" {
		keep.task = digest("task", e.Task)
	}
	if e.Repo != "" {
		keep.repo = digest("repo", strings.ToLower(e.Repo))
	}
	return keep
}

// digest is the digest a claim keeps of a task or a repository: enough to
// tell whether an entry is a listing's, nothing to read back.
func digest(what, s string) string {
	if s == "" {
		return ""
	}
	h := sha256.Sum256([]byte("ghonce." + what + "\x00" + s))
	return hex.EncodeToString(h[:16])
}

// holderID is the opaque name a claim gives its holder (ledger.Owner.ID,
// which names the host and the process).
func holderID(id string) string {
	if id == "" || strings.HasPrefix(id, "h:") {
		return id
	}
	return "h:" + digest("holder", id)
}

// encode is the message of a commit that stores e and history over prev,
// the record of the entry it replaces (nil for a new one): prev's digests
// stay for what e does not name, and prev's sealed identities for a
// holder or a mark that e keeps but this process could not open.
func encode(e *ledger.Entry, history []ledger.Transition, prev *record) string {
	if prev == nil {
		prev = &record{entry: &ledger.Entry{}}
	}
	dg := digestsOf(e, prev.digests)
	holderProc, sendingBy := sealProc(e.Owner.Proc()), sealProc(e.Sending.Proc)
	if holderProc == "" && e.Owner.ID != "" && holderID(e.Owner.ID) == holderID(prev.entry.Owner.ID) {
		holderProc = prev.holderProc
	}
	if sendingBy == "" && !e.Sending.At.IsZero() && e.Sending.At.Equal(prev.entry.Sending.At) {
		sendingBy = prev.sendingBy
	}
	x := entryDoc{
		Key: e.Key, Kind: e.Kind, PayloadHash: e.PayloadHash, Status: string(e.Status), Outcome: e.Outcome,
		Ref:        refDoc{Number: e.Ref.Number, ID: e.Ref.ID, URL: e.Ref.URL, SHA: e.Ref.SHA},
		LeaseUntil: stampOf(e.LeaseUntil), Fence: e.Fence, Attempts: e.Attempts, SendingAt: stampOf(e.Sending.At),
		CreatedAt: stampOf(e.CreatedAt), UpdatedAt: stampOf(e.UpdatedAt),
		Holder: holderID(e.Owner.ID), HolderProc: holderProc, SendingBy: sendingBy,
		TaskDigest: dg.task, RepoDigest: dg.repo,
	}
	eb, err := json.Marshal(x)
	if err != nil {
		panic(err) // every field is a plain value
	}
	d := document{V: version, Entry: eb}
	for _, t := range history {
		doc := transitionDoc{At: stampOf(t.At), From: string(t.From), To: string(t.To), Fence: t.Fence}
		if ledger.PublicWhy(t.Why) {
			doc.Why = t.Why // a digest or a fixed phrase: what the same-act rule reads back
		}
		d.History = append(d.History, doc)
	}
	b, err := json.Marshal(d)
	if err != nil {
		panic(err)
	}
	// The first line is for a person looking at the ref with git.
	return fmt.Sprintf("ghonce ledger: %s, fence %d\n\n%s\n", e.Status, e.Fence, b)
}

// decode reads a commit's message, dated date. A format 2 entry names no
// task, step, repository, target or payload, and its holder's process
// identity is still sealed (Ledger.open completes it).
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
	var x entryDoc
	if err := json.Unmarshal(d.Entry, &x); err != nil {
		return nil, fmt.Errorf("%w: the entry does not parse: %v", ledger.ErrNotLedger, err)
	}
	e := &ledger.Entry{
		Key: x.Key, Kind: x.Kind, PayloadHash: x.PayloadHash, Status: ledger.Status(x.Status), Outcome: x.Outcome,
		Ref: ledger.Ref{Number: x.Ref.Number, ID: x.Ref.ID, URL: x.Ref.URL, SHA: x.Ref.SHA}, Fence: x.Fence, Attempts: x.Attempts,
	}
	r := &record{entry: e}
	if d.V == 1 {
		var o v1Fields
		if err := json.Unmarshal(d.Entry, &o); err != nil {
			return nil, fmt.Errorf("%w: the entry does not parse: %v", ledger.ErrNotLedger, err)
		}
		e.Task, e.Step, e.Repo, e.Target, e.Payload, e.LastError = o.Task, o.Step, o.Repo, o.Target, o.Payload, o.LastError
		e.Ref, e.Owner, e.Sending.Proc = o.Ref, o.Owner, o.SendingProc
	} else {
		e.Owner.ID, r.holderProc, r.sendingBy = x.Holder, x.HolderProc, x.SendingBy
	}
	var err error
	for _, f := range []struct {
		s stamp
		t *time.Time
	}{{x.LeaseUntil, &e.LeaseUntil}, {x.SendingAt, &e.Sending.At}, {x.CreatedAt, &e.CreatedAt}, {x.UpdatedAt, &e.UpdatedAt}} {
		if *f.t, err = f.s.at(date); err != nil {
			return nil, fmt.Errorf("%w: %v", ledger.ErrNotLedger, err)
		}
	}
	if !e.Status.Valid() || e.Key == "" || e.Fence < 1 {
		return nil, fmt.Errorf("%w: the entry has no key, fence or status %q", ledger.ErrNotLedger, x.Status)
	}
	for _, t := range d.History {
		at, err := t.At.at(date)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ledger.ErrNotLedger, err)
		}
		r.history = append(r.history, ledger.Transition{Key: e.Key, At: at, Owner: t.Owner, From: ledger.Status(t.From), To: ledger.Status(t.To), Fence: t.Fence, Why: t.Why})
	}
	r.digests = digestsOf(e, digests{x.TaskDigest, x.RepoDigest})
	return r, nil
}
