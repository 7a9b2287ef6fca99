package taskkey

import (
	"strings"
	"testing"
)

// Two spellings of one text are one task: NFC before the key.
func TestIDsNormalisedToNFC(t *testing.T) {
	nfc := Identity{Task: "caf\u00e9", Step: "\u00c5ngstr\u00f6m", Kind: "pr", Repo: "o/r", Target: "main"}
	nfd := Identity{Task: "cafe\u0301", Step: "A\u030angstro\u0308m", Kind: "pr", Repo: "o/r", Target: "main"}
	if Key(nfc) != Key(nfd) {
		t.Errorf("Key(NFC) %s != Key(NFD) %s", Key(nfc), Key(nfd))
	}
	if got := nfd.Clean().Task; got != "caf\u00e9" {
		t.Errorf("Clean().Task = %+q, want the NFC spelling", got)
	}
	if ks := LegacyKeys(nfc); len(ks) != 1 || ks[0] != derive("cafe\u0301", "A\u030angstro\u0308m", "pr", "o/r", "main") {
		t.Errorf("LegacyKeys(NFC) = %v, want the NFD spelling's old key", ks)
	}
	if ks := LegacyKeys(Identity{Task: "T-1", Step: "s", Kind: "pr"}); len(ks) != 0 {
		t.Errorf("LegacyKeys of an ASCII id = %v, want none", ks)
	}
}

// Invisible characters pasted into an id, a branch name or a path are
// refused, with their code point named, never echoed raw.
func TestInvisibleCharactersRefused(t *testing.T) {
	for _, r := range []rune{'\u200b', '\u200d', '\ufeff', '\u202e', '\u2066', '\u2069', '\u200f', '\u2028'} {
		s := "fix" + string(r) + "gnp.exe"
		if err := CheckID("task", s); err == nil || !strings.Contains(err.Error(), "invisible") || strings.ContainsRune(err.Error(), r) {
			t.Errorf("CheckID(%+q) = %v, want refused without the raw character", s, err)
		}
		if err := CheckBranchName(s); err == nil || strings.ContainsRune(err.Error(), r) {
			t.Errorf("CheckBranchName(%+q) = %v, want refused without the raw character", s, err)
		}
		if err := CheckFilePath("docs/" + s); err == nil || strings.ContainsRune(err.Error(), r) {
			t.Errorf("CheckFilePath(%+q) = %v, want refused without the raw character", s, err)
		}
	}
	for _, ok := range []string{"caf\u00e9", "\u65e5\u672c\u8a9e", "T-1 with spaces"} {
		if err := CheckID("task", ok); err != nil {
			t.Errorf("CheckID(%q) = %v", ok, err)
		}
	}
}
