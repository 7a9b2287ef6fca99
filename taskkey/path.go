package taskkey

import (
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"
)

// CheckFilePath reports why p cannot name a file in a repository through
// GitHub's contents API, or nil. p is taken literally: "C#/x.md",
// "what?.md" and "50%25.md" name files with those exact characters (the
// GitHub layer escapes every segment once). Refused: an empty path, a
// leading or trailing "/", an empty segment ("a//b"), invalid UTF-8 or
// control characters, and a "." or ".." segment in any spelling, since some
// layer between here and the file may decode a percent escape: ".%2e",
// "%2E%2e" and "%252e%252e" are "..".
func CheckFilePath(p string) error {
	bad := func(why string) error { return fmt.Errorf("invalid path %q: %s", p, why) }
	switch {
	case p == "":
		return bad("it is empty: want a file path relative to the repository root, e.g. docs/notes.md")
	case !utf8.ValidString(p):
		return bad("it is not valid UTF-8")
	case strings.HasPrefix(p, "/"):
		return bad(`it must be relative to the repository root: drop the leading "/"`)
	case strings.HasSuffix(p, "/"):
		return bad(`it names a directory: want a file path, without the trailing "/"`)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || isFormat(r) {
			return bad(fmt.Sprintf("it must not contain the control or invisible character %U", r))
		}
	}
	for _, seg := range strings.Split(p, "/") {
		switch d := decodeDots(seg); {
		case seg == "":
			return bad(`it has an empty segment ("//")`)
		case d == "." || d == "..":
			return bad(fmt.Sprintf("segment %q is %q: a path must not leave or name its directory; spell the path without it", seg, d))
		}
	}
	return nil
}

// decodeDots percent-decodes s until it stops changing (or does not
// decode), so a "." or ".." hidden behind one or more layers of escaping
// shows.
func decodeDots(s string) string {
	for range 8 {
		d, err := url.PathUnescape(s)
		if err != nil || d == s {
			return s
		}
		s = d
	}
	return s
}
