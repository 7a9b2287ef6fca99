package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/taskkey"
)

// OnChangeAuto (the default of every front; GHONCE_ON_CHANGE sets another)
// answers a run whose key is done with another text than the one that made
// its artifact (a PR's or issue's title, a comment's body). No similarity of
// the texts decides (docs/design/same-act.md):
//
//   - It goes on as OnChangeWarn does (the first artifact, a warning) only
//     for what is provably the same act: the same text once white space,
//     case, Markdown markup and ghonce's markers are set aside, or
//     something besides the text that shows a retry (retryOf): a step the
//     caller named, an earlier attempt that ended without answering its
//     caller, an earlier attempt of the same GitHub Actions run.
//   - Anything else is a *SameOrAnotherError with the facts (the artifact,
//     its text and when it was made, this run's text, a step for another
//     act): the caller, which wrote both texts, says which it is.
//
// Another head, draft flag or labels are reported as OnChangeWarn reports
// them: never a second act by themselves.
const OnChangeAuto = "auto"

// SameOrAnotherError: the key is done, this run's text differs from the one
// that made its artifact, and nothing but the text could tell whether this
// run is that act again (reworded) or another one. Nothing was created or
// changed. If it is the same act, it is done; if another, it takes another
// step (NewStep). Exit 7. Each front says it in its own words (In).
type SameOrAnotherError struct {
	Key    string
	Result *outcome.Result // the done result: the existing artifact
	// Field is what the texts are: "title" (a PR's, an issue's) or "body"
	// (a comment's).
	Field string
	// Existing is the artifact's text when it was made, Text this run's (a
	// body's opening line only, at most openingRunes).
	Existing, Text string
	// Made is when the artifact was made: GitHub's creation time when this
	// run found it there, else when the ledger recorded it done.
	Made time.Time
	// NewStep is a step for another act: this run's step and a slug of its
	// text, so a retry of that act keys it alike.
	NewStep string
}

func (e *SameOrAnotherError) Error() string { return e.In(effect.GoWords{}) }

// In says e in w, the words of a front: the step to use is w's.
func (e *SameOrAnotherError) In(w effect.Words) string {
	noun := nounOf(e.Result.Kind)
	return fmt.Sprintf("%s, and this run's %s is %q. Nothing was created. If this run is that %s again, it is done: nothing to do. If it is another %s, use %s",
		e.Facts(), e.Field, e.Text, noun, noun, w.Name(effect.Option{Name: "step", Value: e.NewStep}))
}

// Facts says what the key made, in one clause: step "issue-create" already
// made https://github.com/o/r/issues/1 (title "Release 1.4.0", 2026-05-01
// 12:00:03 UTC).
func (e *SameOrAnotherError) Facts() string {
	when := ""
	if !e.Made.IsZero() {
		when = ", " + e.Made.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	return fmt.Sprintf("step %q already made %s (%s %q%s)", e.Result.Step, describeResult(e.Result), e.Field, e.Existing, when)
}

// nounOf is a kind in words: "pull request" for pr.
func nounOf(kind string) string {
	if kind == "pr" {
		return "pull request"
	}
	return kind
}

// targetIsAct is a kind whose target alone names the act (a release's
// tag: GitHub keeps one published release per tag): another text under a
// done key is that act reworded, never another.
type targetIsAct interface{ actIsTarget() }

// actText is the text of a payload the rule compares: the title when the
// kind has one, else the body; field names it. ok is false for a kind with
// neither.
func actText(payload []byte) (text, field string, ok bool) {
	var p struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
	}
	if json.Unmarshal(payload, &p) != nil {
		return "", "", false
	}
	switch {
	case p.Title != nil:
		return *p.Title, "title", true
	case p.Body != nil:
		return *p.Body, "body", true
	}
	return "", "", false
}

// Markdown's markup, which says how a text looks, not what it says.
var (
	fenceLine = regexp.MustCompile("(?m)^[ \t]*(```|~~~)[^\n]*$")
	markLine  = regexp.MustCompile(`(?m)^[ \t]*(#{1,6}|[-*+])[ \t]+`)
	mdLink    = regexp.MustCompile(`!?\[([^\]]*)\]\(([^)\s]*)\)`)
	// emphasis is a run of * _ ~ that opens (after a start, a space or an
	// opening bracket, before a word) or closes (after a word, before an
	// end, a space or punctuation): never one inside a word (snake_case,
	// 2*3).
	emphasis = regexp.MustCompile(`(?m)(^|[\s(\[])[*_~]+([^\s*_~])|([^\s*_~])[*_~]+($|[\s.,;:!?)\]])`)
)

// normalText is s as the rule compares it: ghonce's markers and other HTML
// comments, invisible characters, Markdown's markup (emphasis, code spans
// and fences, headings, list bullets, a link's brackets), case and white
// space set aside.
func normalText(s string) string {
	s = stripMarkers(norm.NFC.String(s))
	s = fenceLine.ReplaceAllString(s, "")
	s = markLine.ReplaceAllString(s, "")
	s = mdLink.ReplaceAllString(s, "$1 ($2)")
	s = strings.ReplaceAll(s, "`", "")
	for prev := ""; prev != s; {
		prev, s = s, emphasis.ReplaceAllString(s, "$1$2$3$4")
	}
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// stripMarkers removes HTML comments (ghonce's marker among them), the
// link marker's line and invisible characters: never part of what the
// act says.
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
	if k, ok := taskkey.ParseMarker(s); ok {
		s = taskkey.WithoutMarker(k, s)
	}
	return strings.Map(func(r rune) rune {
		if unicode.In(r, unicode.Cf) {
			return -1
		}
		return r
	}, s)
}

// openingRunes bounds the opening of a body a message quotes.
const openingRunes = 120

// opening is the first line of s that says something, at most
// openingRunes long.
func opening(s string) string {
	for _, line := range strings.Split(stripMarkers(s), "\n") {
		if line = strings.TrimSpace(line); line == "" || fenceLine.MatchString(line) {
			continue
		}
		if r := []rune(line); len(r) > openingRunes {
			return string(r[:openingRunes-1]) + "…"
		}
		return line
	}
	return strings.TrimSpace(s)
}

// retryOf says why this run is provably its key's act again, other than by
// its text: "" when nothing shows it. made is when the artifact was made.
func (e *Engine) retryOf(ctx context.Context, p *Prepared, c *ledger.Claim, entry *ledger.Entry, made time.Time) string {
	switch {
	case p.named:
		return fmt.Sprintf("the step %q was named", p.id.Step)
	case e.unanswered(ctx, c):
		// That caller heard of the artifact through this run, with this
		// text, and may run it again: the history says so (the stored
		// description stays the artifact's). Best effort: without it, the
		// same run again gets the facts.
		_ = e.cfg.Ledger.SetPayload(ctx, ledger.PayloadParams{Key: entry.Key, Fence: entry.Fence, Payload: entry.Payload, PayloadHash: entry.PayloadHash,
			Why: answeredWhy(p.hash), Done: true})
		return "the attempt that made it ended without answering its caller"
	case e.answeredBefore(ctx, entry.Key, p.hash):
		return "a run with this text got it before"
	}
	return e.earlierAttempt(ctx, made)
}

// answeredWhy is the history's record that a run whose description has
// hash was answered with its key's artifact as the same act.
func answeredWhy(hash string) string { return ledger.AnsweredWhy(hash) }

// answeredBefore reports whether a run with the description of hash was
// answered with key's artifact as the same act before (answeredWhy).
func (e *Engine) answeredBefore(ctx context.Context, key, hash string) bool {
	hist, err := e.cfg.Ledger.History(ctx, key)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(hist, func(t ledger.Transition) bool { return t.Why == answeredWhy(hash) })
}

// unanswered reports whether the attempt claim c took over from ended
// without answering its caller: it died holding the key (killed, crashed,
// its machine lost), or its caller went away (a cancelled run), before
// recording the artifact done. Its caller heard of no artifact, and this
// run is that caller's retry. An attempt that answered (a release with
// "it may have happened", exit 3) is not: its caller may have gone on to
// another act. The ledger's history tells them apart.
func (e *Engine) unanswered(ctx context.Context, c *ledger.Claim) bool {
	if c.State != ledger.ClaimAcquired || c.Prior != ledger.Attempting {
		return false
	}
	hist, err := e.cfg.Ledger.History(ctx, c.Entry.Key)
	if err != nil {
		return false
	}
	for i := len(hist) - 1; i >= 0; i-- {
		if t := hist[i]; t.Fence < c.Entry.Fence {
			released := t.From == ledger.Attempting && t.To == ledger.Attempting && t.Why == once.ReleasedWhy
			return !released || cancelled(c.Entry.LastError)
		}
	}
	return false
}

// cancelled reports whether an attempt's recorded error is its caller going
// away: a cancelled context (SIGINT, SIGTERM, an MCP client's cancel).
func cancelled(lastError string) bool {
	return strings.Contains(lastError, "context canceled") || strings.Contains(lastError, "context deadline exceeded")
}

// newStep is a step for the second act whose payload is cur: the step and
// a slug of its text, so running it again (a retry of the second act)
// keys it alike.
func newStep(step string, cur []byte) string {
	text, _, _ := actText(cur)
	slug := taskkey.Slug(stripMarkers(text), 40)
	if slug == "" {
		return step + "-2"
	}
	return step + "-" + slug
}

// earlierAttempt says which earlier attempt of this process's GitHub
// Actions run (Config.Run) made an artifact made at made, from GitHub's
// record of when each attempt ran: "" when none did, or GitHub cannot say
// (a token without actions: read).
func (e *Engine) earlierAttempt(ctx context.Context, made time.Time) string {
	run := e.cfg.Run
	rr, ok := e.cfg.GitHub.(RunReader)
	repo, err := ghcheck.ParseRepo(run.Repo)
	if !ok || err != nil || run.Attempt < 2 || made.IsZero() {
		return ""
	}
	made = made.Truncate(time.Second) // GitHub dates in whole seconds
	for k := run.Attempt - 1; k >= 1; k-- {
		at, err := rr.RunAttempt(ctx, repo, run.ID, k)
		if err != nil {
			e.cfg.Logf("cannot tell whether an earlier attempt of this run made it: %v", err)
			return ""
		}
		if !made.Before(at.Started) && !made.After(at.Ended) {
			return fmt.Sprintf("attempt %d of this GitHub Actions run made it", k)
		}
	}
	return ""
}
