// Package effect is the vocabulary ghonce's engine speaks: the answer to
// "does the artifact exist?" (found, absent, unknown, conflict), the
// artifact itself, and what a failed create means for it. It is a leaf
// package with no dependencies, so the engine (reconcile), the GitHub layer
// (ghcheck) and a guarded command all answer in the same types without
// importing each other.
package effect

import (
	"cmp"
	"errors"
	"strconv"
	"strings"
	"time"
)

// State is the answer to "does it exist?".
type State int

const (
	// Absent: consistent reads show no artifact of ours for the key.
	Absent State = iota + 1
	// Found: our artifact exists; Result.Artifact describes it.
	Found
	// Unknown: reality could not be asked (network, 5xx, rate limit, a
	// check that failed); Result.Err says why.
	Unknown
	// Conflict: the name is taken by something that is not ours (a branch
	// at an unrelated commit); Result.Err says what.
	Conflict
)

func (s State) String() string {
	switch s {
	case Absent:
		return "absent"
	case Found:
		return "found"
	case Unknown:
		return "unknown"
	case Conflict:
		return "conflict"
	}
	return "invalid"
}

// Artifact describes what an action made.
type Artifact struct {
	Number int    // PR or issue number
	ID     int64  // comment id
	URL    string // html_url
	SHA    string // branch head or file blob
	Author string // login
	State  string // open, closed, merged (PRs and issues)
	Text   string // what a guarded command's check printed (not GitHub)
	// Title, Body and Head are a found PR's, issue's or comment's own
	// description as GitHub shows it (Body with ghonce's marker; Head as
	// "owner:branch"), so a run whose ledger was lost can compare its
	// description with the artifact's. Empty when not read.
	Title, Body, Head string
	// Labels are a PR's or issue's label names, as read.
	Labels []string
	// Created is when GitHub made a found PR, issue or comment (zero when
	// not read).
	Created time.Time
	// Warning is set when the artifact was created but a secondary step (for
	// a PR, adding its labels) failed; the artifact still counts.
	Warning string
}

// Result is the answer of a look-up.
type Result struct {
	State    State
	Artifact Artifact
	Err      error
}

// Class says what a failed create means for the artifact.
type Class int

const (
	// ClassExists: the create was refused because it already exists (a 422
	// "already exists"); find it and adopt it if it is ours.
	ClassExists Class = iota + 1
	// ClassRefused: the other side answered and created nothing (4xx other
	// than "already exists", a rate-limit answer, a command's non-zero exit).
	ClassRefused
	// ClassNotSent: the request never left (refused locally before a known
	// rate-limit reset, a cancelled context before sending, a command that
	// could not start).
	ClassNotSent
	// ClassMaybe: the request was sent and the answer was lost or was a 5xx:
	// it may have been created. Never treat this as "not created".
	ClassMaybe
)

func (c Class) String() string {
	switch c {
	case ClassExists:
		return "exists"
	case ClassRefused:
		return "refused"
	case ClassNotSent:
		return "not-sent"
	case ClassMaybe:
		return "maybe"
	}
	return "invalid"
}

// CreateError is the error of every create: Class says whether anything
// may exist.
type CreateError struct {
	Class Class
	Err   error
}

func (e *CreateError) Error() string { return e.Err.Error() }
func (e *CreateError) Unwrap() error { return e.Err }

// InvalidError is input refused before anything is recorded or sent. Field
// is the field at fault by its wire name, the kind's JSON field ("base",
// "title", "from") or the action's ("task", "step", "repo"); "" when no
// one field is. A front reports it as a usage error (the CLI's exit 2)
// and names the field in its own words (Named): a flag, an argument, a
// field of a request.
type InvalidError struct {
	Field   string
	Problem string // what is wrong, after the field's name: "is empty"
	Want    string // what is wanted instead, or ""
	Err     error  // the cause, when there is one; with no Problem, the message
	// Name is the field as the front that reports the error calls it
	// ("--base", "base"); "" is Field.
	Name string
}

func (e *InvalidError) Error() string {
	if e.Problem == "" && e.Err != nil {
		return e.Err.Error()
	}
	msg := e.Problem
	if name := cmp.Or(e.Name, e.Field); name != "" {
		msg = name + " " + msg
	}
	if e.Want != "" {
		msg += ": want " + e.Want
	}
	return msg
}

func (e *InvalidError) Unwrap() error { return e.Err }

// Named returns err with the field of its *InvalidError called name(field),
// a front's own word for it ("--base", "base"), when err says nothing
// besides (a wrapper that only adds a key, say). Other errors, and a field
// name does not know (""), are returned as they are.
func Named(err error, name func(field string) string) error {
	var inv *InvalidError
	if !errors.As(err, &inv) || inv.Field == "" || inv.Problem == "" || err.Error() != inv.Error() {
		return err
	}
	n := name(inv.Field)
	if n == "" {
		return err
	}
	c := *inv
	c.Name = n
	if err == error(inv) {
		return &c
	}
	return &named{msg: c.Error(), err: err}
}

// named is an error said with its field in a front's words.
type named struct {
	msg string
	err error
}

func (e *named) Error() string { return e.msg }
func (e *named) Unwrap() error { return e.err }

// Option is a setting the user gives ghonce, by a name no front uses as
// such ("repo", "task", "step", "ledger", "trust-author", "on-change",
// "stale", "wait", "body", "content", "app-id", "app-private-key",
// "app-installation-id"), and the value advice gives it, if any ("LOGIN",
// "update"). A package below the fronts that advises setting one says it
// as an *AdviceError, never by a front's flag: each front says it in its
// own Words, the CLI its flags, the ghonce action its inputs, a Go caller
// the fields of its options (GoWords).
type Option struct{ Name, Value string }

// AdviceError is an error the user settles by giving or checking an
// option. Err says what went wrong and why, in one line; the next step is
// data (Option, Set, Step), which each front says in its own words: In,
// called once per front where package failure maps the error (failure.Say).
// Error is Err's text alone.
type AdviceError struct {
	Err    error
	Option Option
	// Set: the step asks to give Option (Words.Set), else it names it
	// (Words.Name).
	Set bool
	// Step is the next step, with %s where the option is said; "" is the
	// option alone.
	Step string
}

func (e *AdviceError) Error() string { return e.Err.Error() }
func (e *AdviceError) Unwrap() error { return e.Err }

// Next is the next step in w's words.
func (e *AdviceError) Next(w Words) string {
	w = WordsOr(w)
	said := w.Name(e.Option)
	if e.Set {
		said = w.Set(e.Option)
	}
	if said == "" { // the front has no way to give it: name it as Go does
		said = GoWords{}.Name(e.Option)
	}
	if e.Step == "" {
		return said
	}
	return strings.Replace(e.Step, "%s", said, 1)
}

// In is the error followed by its next step in w's words.
func (e *AdviceError) In(w Words) string { return e.Error() + ": " + e.Next(w) }

// Words says options in one front's vocabulary.
type Words interface {
	// Name is o in running text: "--on-change update", "on-change: update";
	// "" when the front has no way to give o (the ghonce action takes no
	// wait): advice then leaves it out.
	Name(o Option) string
	// Set asks the user to give o: "pass --repo OWNER/NAME or set
	// GH_REPO", "set repo: OWNER/NAME".
	Set(o Option) string
}

// WordsOr is w, or GoWords when w is nil: a package's words for a caller
// that gave none.
func WordsOr(w Words) Words {
	if w == nil {
		return GoWords{}
	}
	return w
}

// GoWords names an option as a Go caller sets it: the field of its
// options that holds it ("TrustedAuthors", "OnChange").
type GoWords struct{}

// goFields are the options whose field is not the name in CamelCase.
var goFields = map[string]string{"trust-author": "TrustedAuthors", "app-id": "AppID", "app-installation-id": "InstallationID", "app-private-key": "PrivateKey"}

func (GoWords) Name(o Option) string {
	f, ok := goFields[o.Name]
	if !ok {
		for _, w := range strings.Split(o.Name, "-") {
			if w != "" {
				f += strings.ToUpper(w[:1]) + w[1:]
			}
		}
	}
	if o.Value != "" {
		f += " " + strconv.Quote(o.Value)
	}
	return f
}

func (w GoWords) Set(o Option) string {
	if o.Value == "" {
		return "set " + w.Name(o)
	}
	return "set " + w.Name(Option{Name: o.Name}) + " to " + strconv.Quote(o.Value)
}
