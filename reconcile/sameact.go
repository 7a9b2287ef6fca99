package reconcile

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/ghonce/ghonce/taskkey"
)

// OnChangeAuto (the default of fronts that take no flags: the gh shim,
// the MCP tools, the go-github transport; and of every front under
// GHONCE_ON_CHANGE=auto) tells a reworded retry from a second act: a run
// whose text still says what the first said goes on as OnChangeWarn does
// (the first artifact is the answer); one whose text is plainly another
// act stops as OnChangeFail does, with a *ChangedError whose Different
// says why, so no front answers "success" with another act's URL.
//
// The rule (docs/design/same-act.md; held to the corpus in
// testdata/acts.json by TestSameActCorpus):
//
//   - Only the text counts: a PR's or issue's title, a comment's body.
//     The title names an issue or a pull request; its body is often a
//     template and is rewritten freely on a retry.
//   - The text is reduced to its content words: lower case, split at
//     anything but letters and digits, words that say nothing of what the
//     act is ("the", "retry", "again", "follow-up", ...) dropped, each word
//     stemmed (one ending off, then cut to five letters), so
//     "tests"/"testing" and "authentication"/"authenticate" are one word.
//     Short forms count as their long ones ("PR" is "pull request").
//   - A retry keeps most of the first act's words: it is the same act when
//     the words both share are at least half of all the words of the two
//     (Jaccard index >= 0.5), or when one says all the other says and a
//     little more (at least two words, at most three more, no other
//     number: "Fix #42", then "Fix #42: handle nil config"); numbers count
//     as words. Not when the numbers differ (a retry never
//     changes "#41" into "#42" or one date into another). A text with no
//     content words at all (an emoji) is the same act only when it is the
//     same text.
//   - A text of the same shape with its subject swapped (every word in its
//     place but for content words in some places: "Build fails on macOS",
//     "Build fails on Windows") is the next act of a series.
//   - A front whose session already reported the first artifact to its
//     caller (Action.Heard: the MCP session, the go-github transport) knows
//     it was no crash: any change of its content words or numbers is a
//     second act ("(retry)", case, punctuation and markup are no change).
//
// Everything else (another head, draft, labels) is what OnChangeWarn
// reports: never a second act by itself.
const OnChangeAuto = "auto"

// sameActThreshold is the overlap of content words at and above which a
// reworded text is a retry of the first act.
const sameActThreshold = 0.5

// actText is the text of a payload the rule compares: the title when the
// kind has one, else the body. ok is false for a kind with neither.
func actText(payload []byte) (string, bool) {
	var p struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return "", false
	}
	switch {
	case p.Title != nil:
		return *p.Title, true
	case p.Body != nil:
		return *p.Body, true
	}
	return "", false
}

// differentAct applies the rule to the stored payload and this run's:
// why is empty for the same act (or a kind the rule does not judge).
func differentAct(old, cur []byte, heard bool) (why string) {
	a, ok := actText(old)
	b, ok2 := actText(cur)
	if !ok || !ok2 {
		return ""
	}
	field := "body"
	if t, _ := fieldOf(cur, "title"); t {
		field = "title"
	}
	same, score := SameAct(a, b)
	switch {
	case heard && !sameContent(a, b):
		return fmt.Sprintf("this session was already told of the first one, and the %s says something else (%q, then %q)", field, a, b)
	case swapped(a, b):
		return fmt.Sprintf("the %s is the first one's with other words in their places (%q, then %q), as the next of a series is", field, a, b)
	case !same:
		return fmt.Sprintf("the %s shares %.0f%% of its content words with the first one's (%q, then %q); a retry shares at least %.0f%%", field, 100*score, a, b, 100*sameActThreshold)
	}
	return ""
}

func fieldOf(payload []byte, name string) (bool, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(payload, &m); err != nil {
		return false, err
	}
	_, ok := m[name]
	return ok, nil
}

// SameAct reports whether text b (a title, or a comment's body) reads as a
// retry of text a under the rule of OnChangeAuto, and the overlap of their
// content words (0..1).
func SameAct(a, b string) (bool, float64) {
	wa, na := actWords(a)
	wb, nb := actWords(b)
	if len(na) > 0 && len(nb) > 0 && !slices.Equal(na, nb) {
		return false, 0
	}
	for _, n := range na {
		wa["#"+n] = true
	}
	for _, n := range nb {
		wb["#"+n] = true
	}
	if swapped(a, b) {
		return false, 0
	}
	if len(wa) == 0 || len(wb) == 0 {
		// Nothing but punctuation, emoji or stop words: compare as written.
		if sameWords(a, b) && strings.EqualFold(strings.Join(strings.Fields(stripMarkers(a)), " "), strings.Join(strings.Fields(stripMarkers(b)), " ")) {
			return true, 1
		}
		return false, 0
	}
	shared := 0
	for w := range wa {
		if wb[w] {
			shared++
		}
	}
	score := float64(shared) / float64(len(wa)+len(wb)-shared)
	if small := min(len(wa), len(wb)); shared == small && small >= 2 && max(len(wa), len(wb))-small <= 3 && slices.Equal(na, nb) {
		// One says all the other says, and a little more: an elaboration
		// ("Fix #42", then "Fix #42: handle nil config").
		return true, score
	}
	return score >= sameActThreshold, score
}

// swapped reports whether b is a with its subject replaced: the same
// words in the same places but for content words in some of them, as the
// texts of a series are ("Build fails on macOS", "Build fails on
// Windows"). A retry that rewords rarely keeps every other word in place.
func swapped(a, b string) bool {
	ta, tb := tokens(a), tokens(b)
	if len(ta) != len(tb) {
		return false
	}
	diff := 0
	for i := range ta {
		if ta[i] == tb[i] || stem(ta[i]) == stem(tb[i]) {
			continue
		}
		if stopWords[ta[i]] || stopWords[tb[i]] {
			return false
		}
		diff++
	}
	return diff > 0 && diff < len(ta)
}

// sameContent reports whether a and b have the same content words and
// numbers (see actWords): "(retry)", case, punctuation and markup are no
// change. Texts with no content words are compared by their words.
func sameContent(a, b string) bool {
	wa, na := actWords(a)
	wb, nb := actWords(b)
	if len(wa) == 0 && len(wb) == 0 {
		return sameWords(a, b)
	}
	return maps.Equal(wa, wb) && slices.Equal(na, nb)
}

// sameWords reports whether a and b say the same words in the same order:
// a change of case, punctuation, markup or white space is no change.
func sameWords(a, b string) bool {
	return slices.Equal(tokens(a), tokens(b))
}

// tokens are the words and numbers of s, lower-cased, HTML comments and
// invisible characters left out.
func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(stripMarkers(s)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// stripMarkers removes HTML comments (ghonce's marker among them) and
// invisible characters: never part of what the act says.
func stripMarkers(s string) string {
	for {
		i := strings.Index(s, "<!--")
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], "-->")
		if j < 0 {
			break
		}
		s = s[:i] + s[i+j+3:]
	}
	return strings.Map(func(r rune) rune {
		if unicode.In(r, unicode.Cf) {
			return -1
		}
		return r
	}, s)
}

// actWords returns the content words of s (stemmed: see stem) and its
// numbers, sorted.
func actWords(s string) (map[string]bool, []string) {
	words := map[string]bool{}
	var nums []string
	for _, f := range tokens(s) {
		if isNumber(f) {
			if n := strings.TrimLeft(f, "0"); n != "" {
				nums = append(nums, n)
			} else {
				nums = append(nums, "0")
			}
			continue
		}
		if stopWords[f] || len([]rune(f)) < 2 {
			continue
		}
		if long, ok := abbreviations[f]; ok {
			for _, w := range long {
				words[stem(w)] = true
			}
			continue
		}
		words[stem(f)] = true
	}
	slices.Sort(nums)
	return words, slices.Compact(nums)
}

// stem folds the forms of a word into one: one common English ending off
// ("testing", "tested", "tests" are "test"), then the first five letters
// ("authentication" and "authenticate" are "authe").
func stem(w string) string {
	for _, suf := range []string{"ing", "ed", "es", "s", "e"} {
		if r, ok := strings.CutSuffix(w, suf); ok && len([]rune(r)) >= 3 {
			w = r
			break
		}
	}
	if r := []rune(w); len(r) > 5 {
		w = string(r[:5])
	}
	return w
}

func isNumber(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

// abbreviations are the short forms an agent swaps for the long ones when
// it rewords GitHub's vocabulary.
var abbreviations = map[string][]string{
	"pr": {"pull", "request"}, "prs": {"pull", "request"}, "ci": {"continuous", "integration"},
	"repo": {"repository"}, "docs": {"documentation"}, "doc": {"documentation"},
	"config": {"configuration"}, "deps": {"dependencies"}, "dep": {"dependencies"},
}

// stopWords say nothing of which act a text is: articles, pronouns,
// connectives, and the words an agent adds when it tries again or files
// one more of a series.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but of in on at to for from by with without into onto
		is are was were be been being am it its this that these those there here as so than then
		i we you he she they me us my our your their his her them
		do does did done doing have has had will would should could can may might must shall
		not no yes also just now still only very too all any some more most other such own same
		please pls kindly ok okay thanks thank what which who when where why how
		retry retries retrying retried again attempt attempting try trying second another once more
		reworded rewording rephrased retitled resend resent repost reposted
		follow up followup todo wip note fyi re update updated`) {
		m[w] = true
	}
	// "done" and "started" say which act a status comment is.
	delete(m, "done")
	return m
}()

// newStep is a step for the second act whose payload is cur: the step and
// a slug of its text, so running it again (a retry of the second act)
// keys it alike.
func newStep(step string, cur []byte) string {
	text, _ := actText(cur)
	slug := taskkey.Slug(stripMarkers(text), 40)
	if slug == "" {
		return step + "-2"
	}
	return step + "-" + slug
}
