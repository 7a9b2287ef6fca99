package failure

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
)

func TestDescribe(t *testing.T) {
	const key = "gk1_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	// GitHub's answers as ghcheck hands them over (ghcheck's
	// TestErrorsCarryGitHubsAnswer checks that it does).
	unprocessable := &ghcheck.ResponseError{StatusCode: http.StatusUnprocessableEntity, Field: "title", Err: errors.New("422 Validation Failed")}
	answered := func(st int) error { return &ghcheck.ResponseError{StatusCode: st, Err: fmt.Errorf("%d", st)} }
	for _, tc := range []struct {
		name   string
		err    error
		code   int
		kind   Kind
		key    string
		state  string
		status int
		field  string
		next   string
	}{
		{"usage", Usagef("no task: pass --task"), ExitUsage, Usage, "", "", 0, "", "ghonce pr create --help"},
		// The CLI types cobra's errors where they arise (TestUsageErrorsPointAtTheVerb);
		// an error's text says nothing of its kind.
		{"an EINVAL from the ledger is not usage", fmt.Errorf("sync ledger wal: %w", syscall.EINVAL), ExitError, Other, "", "", 0, "", "error.message"},
		{"an untyped error worded like cobra's is not usage", errors.New(`unknown command "nope" for "ghonce"`), ExitError, Other, "", "", 0, "", "error.message"},
		{"usage after the key", &Keyed{Key: key, Err: Usagef("bad")}, ExitUsage, Usage, key, "", 0, "", "--help"},
		{"missing token", &MissingCredentials{Err: errors.New("no GitHub token")}, ExitUsage, Credentials, "", "", 0, "", "GH_TOKEN"},
		{"token rejected", fmt.Errorf("login: %w", ghcheck.ErrCredentials), ExitError, Credentials, "", "", 0, "", "token GitHub accepts"},
		{"unconfirmed", &outcome.UnconfirmedError{Key: key, Err: errors.New("504")}, ExitUnconfirmed, Unconfirmed, key, "attempting", 0, "", "ghonce resolve " + key},
		{"in progress", &outcome.InProgressError{Key: key}, ExitInProgress, InProgress, key, "attempting", 0, "", "rerun"},
		{"conflict", &Keyed{Key: key, State: ledger.Failed, Err: &outcome.ConflictError{Key: key, Err: errors.New("taken")}}, ExitError, Conflict, key, "failed", 0, "", "not ours"},
		{"refused with a field", &Keyed{Key: key, State: ledger.Failed, Err: fmt.Errorf("create issue: %w", &effect.CreateError{Class: effect.ClassRefused, Err: unprocessable})},
			ExitError, Refused, key, "failed", 422, "title", "nothing was created"},
		{"a 4xx outside a create", fmt.Errorf("resolve --from x: %w", answered(404)), ExitError, Refused, "", "", 404, "", "fix what GitHub refused"},
		{"a 401 is credentials", answered(401), ExitError, Credentials, "", "", 401, "", "token"},
		{"not a ledger", &LedgerError{Err: fmt.Errorf("open x.db: %w", ledger.ErrNotLedger)}, ExitError, Ledger, "", "", 0, "", "ledger location"},
		{"newer schema", fmt.Errorf("open: %w", ledger.ErrNewerSchema), ExitError, Ledger, "", "", 0, "", "ledger"},
		{"no such entry", &Keyed{Key: key, Err: fmt.Errorf("status: %w", ledger.ErrNotFound)}, ExitError, Ledger, key, "", 0, "", "ghonce status"},
		{"anything else", errors.New("disk on fire"), ExitError, Other, "", "", 0, "", "error.message"},
		{"an unconfirmed message that reads like cobra's", &outcome.UnconfirmedError{Key: key, Err: errors.New("server accepts only JSON")}, ExitUnconfirmed, Unconfirmed, key, "attempting", 0, "", "reconcile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Describe(tc.err, "pr create", nil)
			if f.OK || f.ExitCode != tc.code || f.Error.Kind != tc.kind || f.Key != tc.key || f.State != tc.state ||
				f.Error.HTTPStatus != tc.status || f.Error.Field != tc.field {
				t.Errorf("%s: got %+v; want exit %d kind %s key %q state %q status %d field %q", tc.name, f, tc.code, tc.kind, tc.key, tc.state, tc.status, tc.field)
			}
			if !strings.Contains(f.Next, tc.next) {
				t.Errorf("%s: next %q does not say %q", tc.name, f.Next, tc.next)
			}
			if f.Error.Message == "" {
				t.Errorf("%s: no message", tc.name)
			}
		})
	}
}

func TestMessageDropsTheTrailingNewline(t *testing.T) {
	if got := Message(errors.New("plain message\n")); got != "plain message" {
		t.Errorf("Message = %q, want %q", got, "plain message")
	}
}

// Next names the options it advises in the caller's words: a Go caller's
// fields by default, never a CLI flag; a front's own when it gives them.
func TestNextNamesOptionsInTheCallersWords(t *testing.T) {
	inProgress := &outcome.InProgressError{Key: "k"}
	if next := Describe(inProgress, "", nil).Next; !strings.Contains(next, "raise Wait") || strings.Contains(next, "--") {
		t.Errorf("a Go caller's next: %q; want the field Wait, no flag", next)
	}
	if next := Describe(inProgress, "", inputs{}).Next; !strings.Contains(next, "raise wait:") {
		t.Errorf("a front's next: %q; want its wait:", next)
	}
	if next := Describe(inProgress, "", noWait{}).Next; strings.Contains(next, "raise") || !strings.Contains(next, "rerun") {
		t.Errorf("next of a front without a wait: %q; want to wait and rerun, and nothing to raise", next)
	}
}

// A holder on another machine may have died: only its lease's end tells.
// Next says when that is, and how long a wait outlasts it, in the caller's
// words (issue 40: the Action said to rerun once the other run finished).
func TestNextOfAHolderElsewhereNamesItsLeasesEnd(t *testing.T) {
	until := time.Date(2026, 9, 16, 12, 2, 5, 0, time.UTC)
	ip := &outcome.InProgressError{Key: "k", Holder: ledger.Owner{ID: "runner-7/42/x"}, Until: until, Left: 100 * time.Second}
	for _, c := range []struct {
		w    effect.Words
		want string
	}{{inputs{}, "rerun after 2026-09-16T12:02:05Z, when its lease ends (the key is taken over then if its holder died), or wait for it: wait:"},
		{noWait{}, "rerun after 2026-09-16T12:02:05Z, when its lease ends (the key is taken over then if its holder died)"}} {
		if next := Describe(ip, "", c.w).Next; !strings.HasPrefix(next, c.want) || c.w == (noWait{}) && strings.Contains(next, "wait for it") {
			t.Errorf("next: %q; want %q", next, c.want)
		}
	}
	if got := ip.WaitPast(); got != 150*time.Second {
		t.Errorf("WaitPast with 1m40s left: %s, want 2m30s (rounded up to the half minute, and a minute more)", got)
	}
	if ip.Here = true; ip.WaitPast() != 0 || strings.Contains(Describe(ip, "", inputs{}).Next, "lease") {
		t.Error("a holder that runs on this machine: want no lease in the advice")
	}
}

// noWait is a front that has no way to give wait (the gh shim).
type noWait struct{ inputs }

func (w noWait) Name(o effect.Option) string {
	if o.Name == "wait" {
		return ""
	}
	return w.inputs.Name(o)
}

// inputs names an option as a front's input: "wait:".
type inputs struct{}

func (inputs) Name(o effect.Option) string  { return o.Name + ":" }
func (w inputs) Set(o effect.Option) string { return "set " + w.Name(o) }

// An advice is said where its text stands in the chain, in the caller's
// words; a Go caller is told the field to set.
func TestSayPutsTheAdviceInTheCallersWords(t *testing.T) {
	adv := &effect.AdviceError{Err: errors.New("open ledger: no repository"), Option: effect.Option{Name: "repo", Value: "OWNER/REPO"}, Set: true}
	err := &LedgerError{Err: fmt.Errorf("%w (the ledger flag chooses it)", adv)}
	if got, want := Say(err, nil), `open ledger: no repository: set Repo to "OWNER/REPO" (the ledger flag chooses it)`; got != want {
		t.Errorf("Say in Go's words: %q; want %q", got, want)
	}
	if got, want := Describe(err, "", inputs{}).Error.Message, "open ledger: no repository: set repo: (the ledger flag chooses it)"; got != want {
		t.Errorf("Describe in a front's words: %q; want %q", got, want)
	}
	if got := In(err, inputs{}); !errors.Is(got, adv) || got.Error() != Say(err, inputs{}) {
		t.Errorf("In: %v; want the said text, unwrapping to the advice", got)
	}
}
