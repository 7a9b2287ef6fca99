package taskkey

import "unicode"

// isFormat reports whether r is invisible or reorders the text around it:
// Unicode's format characters (Cf: zero-width space U+200B, joiners, the
// byte-order mark U+FEFF, the bidirectional controls U+202A–U+202E and
// U+2066–U+2069) and the line and paragraph separators U+2028, U+2029.
// Pasted into an id, a branch name or a path, each makes two strings that
// look alike differ, or one that reads "gnp.exe" be "exe.png".
func isFormat(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}
