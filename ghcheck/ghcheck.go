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

	"github.com/ghonce/ghonce/effect"
)

// Repo is a repository, "owner/name".
type Repo struct{ Owner, Name string }

func (r Repo) String() string { return r.Owner + "/" + r.Name }

// ParseRepo parses "owner/name". It accepts nothing else: no URL, no host, no
// extra path segment, no ".git" suffix (GitHub serves acme/app.git as
// acme/app, and a key derived from the other spelling would be another
// key); ParseRepoRef reads those forms.
func ParseRepo(s string) (Repo, error) {
	owner, name, ok := strings.Cut(s, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") || !validRepoPart(owner) || !validRepoPart(name) {
		return Repo{}, &effect.InvalidError{Field: "repo", Problem: fmt.Sprintf("%q is not a repository", s), Want: "OWNER/NAME, e.g. octo-org/hello-world"}
	}
	if strings.HasSuffix(strings.ToLower(name), ".git") {
		return Repo{}, &effect.InvalidError{Field: "repo", Problem: fmt.Sprintf("%q ends in \".git\"", s), Want: fmt.Sprintf("it without, as %s/%s", owner, name[:len(name)-4])}
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

// The answers of ghcheck are the engine's vocabulary (package effect);
// these aliases keep ghcheck's names for callers that speak GitHub.
type (
	// State is the answer to "does it exist?".
	State = effect.State
	// Artifact describes something on GitHub.
	Artifact = effect.Artifact
	// Result is the answer of a Find method.
	Result = effect.Result
	// Class says what a failed create means for the artifact.
	Class = effect.Class
	// CreateError is the error of every Create method.
	CreateError = effect.CreateError
)

const (
	Absent   = effect.Absent
	Found    = effect.Found
	Unknown  = effect.Unknown
	Conflict = effect.Conflict

	ClassExists  = effect.ClassExists
	ClassRefused = effect.ClassRefused
	ClassNotSent = effect.ClassNotSent
	ClassMaybe   = effect.ClassMaybe
)
