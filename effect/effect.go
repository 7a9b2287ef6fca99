// Package effect is the vocabulary ghonce's engine speaks: the answer to
// "does the artifact exist?" (found, absent, unknown, conflict), the
// artifact itself, and what a failed create means for it. It is a leaf
// package with no dependencies, so the engine (reconcile), the GitHub layer
// (ghcheck) and a guarded command all answer in the same types without
// importing each other.
package effect

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
