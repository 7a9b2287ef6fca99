package taskkey

import (
	"slices"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// LegacyKeys returns the keys an id whose task or step was not in NFC may
// have been recorded under before CleanID normalised them: the key of the
// id as given (only trimmed), and of its decomposed form NFD (the spelling
// of macOS file names, so an id typed in NFC finds an entry a run with the
// NFD spelling made). Keys equal to Key(id) are left out; for an id that
// is NFC and NFD alike (plain ASCII, say) the list is empty.
func LegacyKeys(id Identity) []string {
	cur := Key(id)
	var out []string
	for _, f := range []func(string) string{strings.TrimSpace, func(s string) string { return norm.NFD.String(strings.TrimSpace(s)) }} {
		old := id
		old.Task, old.Step = f(id.Task), f(id.Step)
		if k := legacyKey(old); k != cur && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// legacyKey is Key without the NFC step: the derivation as it was.
func legacyKey(id Identity) string {
	return derive(id.Task, id.Step, id.Kind, id.Repo, id.Target)
}
