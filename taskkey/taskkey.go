// Package taskkey derives the stable key that names one side effect, and the
// tags (label, hidden body marker, branch name) that let ghonce find the
// artifact again on GitHub.
//
// # Derivation (version 1, frozen)
//
// A key is computed from the identity of the work only: task, step, kind,
// repository and target. Never from a time, a random value or generated text.
//
//  1. Task and step are normalised (see CleanID): surrounding white space is
//     removed, so "T-1", " T-1" and "T-1\n" are one task, and the id is put
//     in Unicode normalisation form C, so "café" typed as one code point
//     (U+00E9) or as "e" plus a combining accent (U+0301, as macOS file
//     names spell it) is one task. The repository is lower-cased (GitHub
//     compares owner/name without case); every other field is used byte for
//     byte. Clean ids are unchanged by this, so every key derived before the
//     rule existed still matches; for an id that was not clean, LegacyKeys
//     gives the keys it derived before, so an entry already recorded under
//     one keeps it.
//  2. The fields are written in the order domain, task, step, kind, repo, target
//     as netstrings ("<decimal length>:<bytes>,"), where domain is the literal
//     "ghonce.key.v1". Length prefixes make the encoding injective: no choice
//     of field values can make two different identities encode alike.
//  3. The encoding is hashed with SHA-256; the first 20 bytes (160 bits) are
//     written in lower-case RFC 4648 base32 without padding (32 characters).
//  4. The key is "gk1_" followed by those 32 characters.
//
// The golden vectors in taskkey_test.go pin this derivation; a change to any of
// them breaks every ledger and every tag already on GitHub, so it must come
// with a new version prefix instead.
package taskkey

import (
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/ghonce/ghonce/effect"
)

// Prefix starts every version 1 key.
const Prefix = "gk1_"

// Len is the length of a key in characters.
const Len = len(Prefix) + 32

const domain = "ghonce.key.v1"

var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Identity is what a side effect is: the same identity always yields the same key.
type Identity struct {
	Task   string // the unit of work, e.g. an issue or ticket id; required
	Step   string // the step within the task, e.g. "pr-create"; required
	Kind   string // the kind of artifact, e.g. "pr"; required
	Repo   string // "owner/name"; empty only for kinds that do not touch GitHub
	Target string // kind-specific: the base branch of a PR, the issue number of a comment, ...
}

// MaxID is the longest task or step accepted, in characters. Ids name work
// (an issue, a ticket, a job); anything longer is almost certainly generated
// text, which changes between attempts and must not be part of a key.
const MaxID = 256

// CleanID is the one rule for task and step ids, applied everywhere a key
// is derived: surrounding white space (spaces, tabs, a trailing newline
// read from a file) is removed and the rest is put in Unicode NFC, so two
// spellings of one text that look alike are one id. Nothing else is
// changed: case and inner spaces are part of the id.
func CleanID(s string) string { return norm.NFC.String(strings.TrimSpace(s)) }

// CheckID reports why a task or step id (what names it: "task" or "step")
// cannot be used, after CleanID: empty, not UTF-8, holding a control
// character (a newline inside it, say), or longer than MaxID characters.
// Its error is an *effect.InvalidError whose Field is what.
func CheckID(what, s string) error {
	s = CleanID(s)
	bad := func(problem, want string) error {
		return &effect.InvalidError{Field: what, Problem: problem, Want: want}
	}
	const named = "an id that names the work (an issue or ticket), never its text or a time"
	switch {
	case s == "":
		return bad("is empty", named)
	case !utf8.ValidString(s):
		return bad("is not valid UTF-8", named)
	case utf8.RuneCountInString(s) > MaxID:
		return bad(fmt.Sprintf("is %d characters, over the limit of %d", utf8.RuneCountInString(s), MaxID), named)
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return bad(fmt.Sprintf("%q holds a control character (%U)", s, r), "one line of printable text")
		}
		if isFormat(r) {
			return bad(fmt.Sprintf("%q holds the invisible character %U (zero-width, byte-order mark or a text-direction control, often pasted by accident)", s, r), "the id retyped")
		}
	}
	return nil
}

// Clean returns id with task and step normalised by CleanID.
func (id Identity) Clean() Identity {
	id.Task, id.Step = CleanID(id.Task), CleanID(id.Step)
	return id
}

// Validate reports the first missing or malformed field.
func (id Identity) Validate() error {
	if err := CheckID("task", id.Task); err != nil {
		return err
	}
	if err := CheckID("step", id.Step); err != nil {
		return err
	}
	if id.Kind == "" {
		return errors.New("kind is empty")
	}
	return nil
}

// Key derives the key of id, after Clean. It does not validate id; call
// Validate first.
func Key(id Identity) string {
	id = id.Clean()
	return derive(id.Task, id.Step, id.Kind, id.Repo, id.Target)
}

// derive is steps 2 to 4 of the derivation, on fields already cleaned.
func derive(task, step, kind, repo, target string) string {
	var b strings.Builder
	for _, f := range []string{domain, task, step, kind, strings.ToLower(repo), target} {
		b.WriteString(strconv.Itoa(len(f)))
		b.WriteByte(':')
		b.WriteString(f)
		b.WriteByte(',')
	}
	sum := sha256.Sum256([]byte(b.String()))
	return Prefix + b32.EncodeToString(sum[:20])
}

// Valid reports whether s has the shape of a version 1 key.
func Valid(s string) bool {
	if len(s) != Len || !strings.HasPrefix(s, Prefix) {
		return false
	}
	for _, r := range s[len(Prefix):] {
		if !(r >= 'a' && r <= 'z' || r >= '2' && r <= '7') {
			return false
		}
	}
	return true
}

// Label is the GitHub label that tags the artifact of key: "ghonce:" + key,
// 43 characters, within GitHub's 50-character limit.
func Label(key string) string { return "ghonce:" + key }

// markerOpen and markerClose frame the hidden marker. The marker is the first
// line of every body ghonce writes, where GitHub's 65,536-character limit
// cannot cut it off and where a quote by someone else ("> <!-- ...") cannot
// pose as it.
const (
	markerOpen  = "<!-- ghonce:key="
	markerClose = " -->"
)

// The second channel: a Markdown link reference definition, which renders
// as nothing, on the line after the marker. It is no HTML comment, so it
// survives what strips them: github/gh-aw's safe-output sanitizer,
// claude-code-action's comment server, a person's edit that removed the
// comment. With the comment gone it is the body's first line that is not
// blank, which is where ParseMarker looks for it.
const (
	linkOpen  = "[ghonce-key]: # ("
	linkClose = ")"
)

// Marker returns the hidden marker line for key (without a newline).
func Marker(key string) string { return markerOpen + key + markerClose }

// LinkMarker returns the second channel's line for key (without a
// newline): a link reference definition, which Markdown renders as nothing.
func LinkMarker(key string) string { return linkOpen + key + linkClose }

// WithMarker tags body with key: the marker on the first line, the link
// marker on the second.
func WithMarker(key, body string) string { return Marker(key) + "\n" + LinkMarker(key) + "\n" + body }

// WithoutMarker is body less what WithMarker added, as GitHub shows it
// (either channel may be gone, and line ends may be "\r\n"). A body that
// does not start with key's tags is returned as it is.
func WithoutMarker(key, body string) string {
	rest := body
	if line, after, _ := cutLine(rest); line == Marker(key) {
		rest = after
	} else {
		rest = strings.Replace(rest, Marker(key), "", 1)
	}
	if line, after, _ := cutLine(strings.TrimLeft(rest, "\r\n")); line == LinkMarker(key) {
		return after
	}
	return rest
}

// cutLine cuts s after its first line, which it returns without "\r\n".
func cutLine(s string) (line, rest string, ok bool) {
	line, rest, ok = strings.Cut(s, "\n")
	return strings.TrimSuffix(line, "\r"), rest, ok
}

// ParseMarker returns the key carried by body's tags. Only a tag that
// ghonce itself writes counts: the marker must be the whole first line of
// the body, or, where HTML comments were stripped, the link marker the
// whole first line that is not blank (a trailing "\r" from GitHub's line
// endings is allowed), carrying a well-formed key. Anything else,
// including a tag quoted or embedded later in the body, yields ok == false.
func ParseMarker(body string) (key string, ok bool) {
	line, _, _ := cutLine(body)
	if strings.HasPrefix(line, markerOpen) && strings.HasSuffix(line, markerClose) {
		key = line[len(markerOpen) : len(line)-len(markerClose)]
		return key, Valid(key)
	}
	line, _, _ = cutLine(strings.TrimLeft(body, "\r\n"))
	if strings.HasPrefix(line, linkOpen) && strings.HasSuffix(line, linkClose) {
		key = line[len(linkOpen) : len(line)-len(linkClose)]
		return key, Valid(key)
	}
	return "", false
}

// HasMarker reports whether body carries exactly key's tags.
func HasMarker(body, key string) bool {
	k, ok := ParseMarker(body)
	return ok && k == key
}

// MaxBody is GitHub's limit on issue, pull request and comment bodies.
const MaxBody = 65536

// CheckBody reports whether body, once the marker is added, fits GitHub's limit.
func CheckBody(key, body string) error {
	// GitHub counts characters; bytes are an upper bound and fail safe.
	if n := len([]rune(WithMarker(key, body))); n > MaxBody {
		return fmt.Errorf("body is %d characters with ghonce's marker, over GitHub's limit of %d: shorten it by %d", n, MaxBody, n-MaxBody)
	}
	return nil
}

// BranchName returns a deterministic, valid branch name for the work of id:
// "ghonce/<task-slug>-<12 key characters>". Agents that push with git use it
// as the head of their pull request.
func BranchName(id Identity) string {
	id = id.Clean()
	k := Key(id)
	slug := Slug(id.Task, 40)
	if slug == "" {
		return "ghonce/" + k[len(Prefix):len(Prefix)+12]
	}
	return "ghonce/" + slug + "-" + k[len(Prefix):len(Prefix)+12]
}

// Slug lower-cases s and keeps [a-z0-9], folding every other run into one "-",
// trimmed to at most max characters without a leading or trailing "-".
func Slug(s string, max int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		} else {
			dash = true
		}
		if b.Len() >= max {
			break
		}
	}
	out := b.String()
	if len(out) > max {
		out = out[:max]
	}
	return strings.Trim(out, "-")
}

// IsCommitSHA reports whether s is a full commit SHA as GitHub writes it:
// 40 lowercase hex digits. Callers that accept a user's SHA lowercase it
// first, or refuse it.
func IsCommitSHA(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// CheckBranchName reports why name is not a valid branch name under
// git check-ref-format's rules, or nil.
func CheckBranchName(name string) error { return checkRefName("branch", "refs/heads/", name) }

// CheckTagName reports why name is not a valid tag name under git
// check-ref-format's rules, or nil.
func CheckTagName(name string) error { return checkRefName("tag", "refs/tags/", name) }

// checkRefName checks name, a ref of the sort what names under prefix.
func checkRefName(what, prefix, name string) error {
	bad := func(why string) error { return fmt.Errorf("invalid %s name %q: %s", what, name, why) }
	switch {
	case name == "":
		return bad("it is empty")
	case name == "@":
		return bad(`"@" alone is not allowed`)
	case strings.HasPrefix(name, "refs/"):
		return bad(fmt.Sprintf("give the %s name without %q", what, prefix))
	case strings.HasSuffix(name, "/"), strings.HasSuffix(name, "."):
		return bad(`it must not end in "/" or "."`)
	case strings.HasPrefix(name, "/"), strings.HasPrefix(name, "-"):
		return bad(`it must not start with "/" or "-"`)
	case strings.Contains(name, ".."):
		return bad(`it must not contain ".."`)
	case strings.Contains(name, "@{"):
		return bad(`it must not contain "@{"`)
	case strings.Contains(name, "//"):
		return bad(`it must not contain "//"`)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return bad(fmt.Sprintf("it must not contain %q", r))
		}
		if isFormat(r) || unicode.IsControl(r) {
			return bad(fmt.Sprintf("it holds the invisible character %U (zero-width, byte-order mark or a text-direction control): retype it", r))
		}
	}
	for _, c := range strings.Split(name, "/") {
		if strings.HasPrefix(c, ".") {
			return bad(`no part may start with "."`)
		}
		if strings.HasSuffix(c, ".lock") {
			return bad(`no part may end in ".lock"`)
		}
	}
	return nil
}

// MaxLabel is GitHub's limit on a label's name.
const MaxLabel = 50

// CheckLabel reports why a user-supplied label cannot be used, or nil.
func CheckLabel(l string) error {
	if strings.TrimSpace(l) == "" {
		return errors.New("label is empty")
	}
	if n := len([]rune(l)); n > MaxLabel {
		return fmt.Errorf("label %q is %d characters, over GitHub's limit of %d", l, n, MaxLabel)
	}
	return nil
}
