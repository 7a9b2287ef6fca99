// Package ghcheck is ghonce's GitHub layer. It answers one question, "does
// our artifact for this key exist on GitHub?", with exactly one of found,
// absent, unknown (or conflict, for a branch someone else owns), and it makes
// the requests that create artifacts, classifying every failure as "exists",
// "refused" (nothing was created), "not sent" or "maybe" (it may have been
// created).
//
// Existence checks use only GitHub's consistent list and get endpoints and
// follow pagination by the Link header. Search may narrow a look-up; it never
// proves absence. Only artifacts authored by the token's identity (GET /user,
// once per Client) or a trusted login count as ours.
package ghcheck

import (
	"fmt"
	"strings"
)

// Repo is a repository, "owner/name".
type Repo struct{ Owner, Name string }

func (r Repo) String() string { return r.Owner + "/" + r.Name }

// ParseRepo parses "owner/name". It accepts nothing else: no URL, no host, no
// extra path segment.
func ParseRepo(s string) (Repo, error) {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") || !validRepoPart(owner) || !validRepoPart(name) {
		return Repo{}, fmt.Errorf("invalid repository %q: want OWNER/NAME, e.g. octo-org/hello-world", s)
	}
	return Repo{Owner: owner, Name: name}, nil
}

func validRepoPart(s string) bool {
	if s == "." || s == ".." || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// State is the answer to "does it exist?".
type State int

const (
	// Absent: consistent reads show no artifact of ours for the key.
	Absent State = iota + 1
	// Found: our artifact exists; Result.Artifact describes it.
	Found
	// Unknown: GitHub could not be asked (network, 5xx, rate limit); Result.Err says why.
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

// Artifact describes something on GitHub.
type Artifact struct {
	Number int    // PR or issue number
	ID     int64  // comment id
	URL    string // html_url
	SHA    string // branch head or file blob
	Author string // login
	State  string // open, closed, merged (PRs and issues)
	Text   string // what a guarded command's check printed (not GitHub)
	// Labels are a PR's or issue's label names, as read.
	Labels []string
	// Warning is set when the artifact was created but a secondary step (for
	// a PR, adding its labels) failed; the artifact still counts.
	Warning string
}

// Result is the answer of a Find method.
type Result struct {
	State    State
	Artifact Artifact
	Err      error
}

// Class says what a failed create means for the artifact.
type Class int

const (
	// ClassExists: GitHub refused because it already exists (a 422 "already
	// exists"); find it and adopt it if it is ours.
	ClassExists Class = iota + 1
	// ClassRefused: GitHub answered and created nothing (4xx other than
	// "already exists", a rate-limit answer).
	ClassRefused
	// ClassNotSent: the request never left (refused locally by go-github
	// before a known rate-limit reset, a cancelled context before sending).
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

// CreateError is the error of every Create method.
type CreateError struct {
	Class Class
	Err   error
}

func (e *CreateError) Error() string { return e.Err.Error() }
func (e *CreateError) Unwrap() error { return e.Err }
