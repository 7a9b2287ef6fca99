// Package secret keeps credentials out of what ghonce shows: the values a
// run read or minted (tokens, a key), replaced wherever they appear, and
// anything shaped like a GitHub token or a JWT, replaced whoever issued it.
package secret

import (
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Mask is what a secret is replaced with.
const Mask = "[REDACTED]"

// tokenShape matches the tokens GitHub issues: classic, OAuth, user,
// installation and refresh tokens (gh[opusr]_), including the stateless
// installation tokens (ghs_APPID_JWT: about 520 characters, two dots;
// GitHub's own pattern is ghs_[A-Za-z0-9._]{36,}), fine-grained personal
// access tokens (github_pat_), and a JWT (an App's, signed with its key).
// A dot is taken only with what follows it, so a sentence's full stop is
// left alone.
var tokenShape = regexp.MustCompile(`\b(?:gh[opusr]_[A-Za-z0-9_-]{16,}(?:\.[A-Za-z0-9_-]+)*|github_pat_[A-Za-z0-9_]{20,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)`)

// Shapes replaces in s everything shaped like a token GitHub issues.
func Shapes(s string) string { return tokenShape.ReplaceAllString(s, Mask) }

// maxValues bounds a Set: a long-running server mints a token an hour, and
// one that expired a day ago can no longer be used by whoever sees it.
const maxValues = 64

// Set is a set of secret values, safe for concurrent use. Its zero value
// is empty, and a nil *Set holds nothing.
type Set struct {
	mu   sync.RWMutex
	vals []string // longest first, so a secret that contains another goes whole
}

// Add adds each value, trimmed of spaces; an empty one is ignored (it would
// match between every two letters).
func (s *Set) Add(vals ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range vals {
		if v = strings.TrimSpace(v); v == "" || slices.Contains(s.vals, v) {
			continue
		}
		if len(s.vals) == maxValues {
			s.vals = s.vals[1:]
		}
		s.vals = append(s.vals, v)
	}
}

// Values returns the values, longest first.
func (s *Set) Values() []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	out := slices.Clone(s.vals)
	s.mu.RUnlock()
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// Scrub replaces in text every value of s, then every token shape.
func (s *Set) Scrub(text string) string {
	for _, v := range s.Values() {
		text = strings.ReplaceAll(text, v, Mask)
	}
	return Shapes(text)
}
