package reconcile

import (
	"encoding/json"
	"os"
	"testing"
)

// Only white space, case, Markdown's markup and ghonce's markers are set
// aside: a sign, an operator, a word's underscore, a version's "v" or a
// trailing "(retry)" still make another text.
func TestSameTextIsOnlyMarkupAway(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"Fix the flaky test", "fix the  flaky\ttest", true},
		{"**Fix** the `flaky` test", "Fix the flaky test", true},
		{"_Deployed_ to ~~staging~~", "Deployed to staging", true},
		{"## Summary\n- one\n* two", "Summary one two", true},
		{"go test ./...\nall green", "```sh\ngo test ./...\n```\nall green", true},
		{"See the log (https://x/run/7).", "See [the log](https://x/run/7).", true},
		{"<!-- ghonce:key=gk1_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa -->\n[ghonce-key]: # (gk1_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa)\nDone.", "Done.", true},
		{"Done\u200b.", "Done.", true},
		{"Set the timeout to -1", "Set the timeout to 1", false},
		{"Retry when x > 5", "Retry when x < 5", false},
		{"Rename snake_case", "Rename snakecase", false},
		{"Compute 2*3", "Compute 23", false},
		{"Release 1.4.0", "Release v1.4.0", false},
		{"Fix the flaky test", "Fix the flaky test (retry)", false},
		{"CI failed.", "CI failed again.", false},
		{"See [the log](https://x/run/7).", "See [the log](https://x/run/8).", false},
	} {
		if got := normalText(tc.a) == normalText(tc.b); got != tc.same {
			t.Errorf("%q and %q: same %v (%q, %q), want %v", tc.a, tc.b, got, normalText(tc.a), normalText(tc.b), tc.same)
		}
	}
}

// No pair of two acts in the corpus has the same text: by its text alone,
// no second act is ever taken for the first (docs/sameact_test.go runs the
// corpus through every front).
func TestCorpusSecondActsDifferInText(t *testing.T) {
	b, err := os.ReadFile("testdata/acts.json")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Pairs []struct {
			Want, Why     string
			First, Second json.RawMessage
		}
	}
	if err := json.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Pairs {
		a, _, _ := actText(p.First)
		b, _, _ := actText(p.Second)
		if p.Want == "two-acts" && normalText(a) == normalText(b) {
			t.Errorf("two acts (%s) read as one text: %q, %q", p.Why, a, b)
		}
	}
}

// A body's opening is its first line that says something, cut short.
func TestOpening(t *testing.T) {
	long := ""
	for range 30 {
		long += "word "
	}
	for in, want := range map[string]string{
		"<!-- marker -->\n\n  Done: the fix is in #12.\nMore.": "Done: the fix is in #12.",
		"```\ncode\n```": "code",
		long:             long[:openingRunes-1] + "…",
		"\u2705 Done\n":  "\u2705 Done",
	} {
		if got := opening(in); got != want {
			t.Errorf("opening(%q) = %q, want %q", in, got, want)
		}
	}
}
