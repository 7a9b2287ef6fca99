package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// claimCounter is a ledger that counts the claims it is asked for.
type claimCounter struct {
	ledger.Ledger
	claims atomic.Int32
}

func (l *claimCounter) Claim(ctx context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	l.claims.Add(1)
	return l.Ledger.Claim(ctx, p)
}

// shapesOf are kinds' candidates their own test files add, from an init
// (kind_review_test.go): a kind's good and bad values beside its tests.
var shapesOf = map[string]func(add func(reconcile.Spec)){}

// shapeCandidates is every description built from a few good and bad
// values of each field ghcheck checks before it sends: branch names, file
// paths, commit messages, heads, commits, issue numbers, bodies and labels.
func shapeCandidates() map[string]reconcile.Spec {
	const sha = "0123456789abcdef0123456789abcdef01234567"
	branches := []string{"main", "feature/x", "", "has space", "a..b", "-x", "x/", "refs/heads/x", "x.lock", "a:b", "@"}
	paths := []string{"README.md", "docs/a.md", "", "/abs", "docs/", "a/../b", "a/./b", "a//b", "a#b", "a?b", "a%2e%2e/b", "..", "%2e%2e/x"}
	messages := []string{"add", "", "   ", "\n"}
	heads := []string{"fix-1", "fork:fix-1", ":fix", "a b:fix", "o/x:fix", "has space", "o:", "o:a..b", "o::b"}
	shas := []string{sha, strings.ToUpper(sha), "abc", ""}
	numbers := []int{1, 0, -3}
	bodies := []string{"b", strings.Repeat("x", taskkey.MaxBody)}
	labels := [][]string{nil, {"ok"}, {""}, {" "}, {strings.Repeat("l", taskkey.MaxLabel+1)}}

	out := map[string]reconcile.Spec{}
	add := func(s reconcile.Spec) { out[s.Kind()+" "+strings.ReplaceAll(fmtSpec(s), taskkey.Prefix, "")] = s }
	for _, b := range branches {
		for _, p := range paths {
			for _, m := range messages {
				add(reconcile.File{Branch: b, Path: p, Message: m, Content: []byte("x")})
			}
		}
		for _, s := range shas {
			add(reconcile.Branch{Name: b, SHA: s})
			add(reconcile.DeleteBranch{Name: b, SHA: s})
		}
	}
	for _, h := range heads {
		for _, body := range bodies {
			for _, l := range labels {
				add(reconcile.PR{Base: "main", Head: h, Title: "t", Body: body, Labels: l})
			}
		}
	}
	for _, body := range bodies {
		for _, l := range labels {
			add(reconcile.Issue{Title: "t", Body: body, Labels: l})
		}
		for _, n := range numbers {
			add(reconcile.Comment{Number: n, Body: body})
		}
	}
	for _, n := range numbers {
		for _, reason := range []string{"", "duplicate", "wontfix"} {
			add(reconcile.Close{Number: n, Reason: reason})
		}
		add(reconcile.Close{Number: n, PR: true})
		add(reconcile.DeleteComment{ID: int64(n), Number: 1})
	}
	for _, kind := range slices.Sorted(maps.Keys(shapesOf)) {
		shapesOf[kind](add)
	}
	return out
}

func fmtSpec(s reconcile.Spec) string {
	// Its fields, each string shortened.
	v := reflect.New(reflect.TypeOf(s)).Elem()
	v.Set(reflect.ValueOf(s))
	for i := range v.NumField() {
		if f := v.Field(i); f.Kind() == reflect.String {
			f.SetString(shortBody(f.String()))
		}
	}
	return fmt.Sprintf("%+v", v.Interface())
}

func shortBody(b string) string {
	if len(b) > 8 {
		return b[:8] + "..."
	}
	return b
}

// refusedByGitHubLayer reports whether ghcheck refuses spec before sending
// anything: its Find answers unknown, or its Create refuses, with no
// request reaching GitHub.
func refusedByGitHubLayer(t *testing.T, w *world, c *ghcheck.Client, spec reconcile.Spec) (bool, string) {
	t.Helper()
	key := taskkey.Key(taskkey.Identity{Task: "SHAPE", Step: "s", Kind: spec.Kind(), Repo: repo, Target: spec.Target()})
	env := &reconcile.Env{GitHub: c, Repo: ghcheck.Repo{Owner: owner, Name: name}}
	before := len(w.GitHub.Requests())
	res := spec.Find(w.ctx, env, key)
	if res.State == effect.Unknown && len(w.GitHub.Requests()) == before {
		return true, "find: " + errText(res.Err)
	}
	if ch, ok := spec.(reconcile.Chooser); ok && ch.Chooses() {
		return false, "" // the engine creates only what Choose chose
	}
	before = len(w.GitHub.Requests())
	_, err := spec.Create(w.ctx, env, key)
	var ce *effect.CreateError
	if errors.As(err, &ce) && ce.Class == effect.ClassRefused && len(w.GitHub.Requests()) == before {
		return true, "create: " + err.Error()
	}
	return false, ""
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Every shape GitHub's layer refuses before sending is refused by Prepare,
// as an *InvalidError, so the front door (Prepare, then Do) never records
// an intent that ghcheck would refuse to act on: that intent would stay
// attempting for ever, since no rerun or reconcile could settle it.
func TestPrepareRefusesEveryShapeGitHubsLayerRefuses(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	c := w.client(token)
	l, err := sqlite.Open(w.ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	counted := &claimCounter{Ledger: l}
	e := reconcile.New(reconcile.Config{Ledger: counted, GitHub: c, LedgerNew: l.Created(), Settle: -1})

	refused := 0
	for name, spec := range shapeCandidates() {
		by, why := refusedByGitHubLayer(t, w, c, spec)
		if !by {
			continue
		}
		refused++
		t.Run(name, func(t *testing.T) {
			claims := counted.claims.Load()
			_, err := do(w.ctx, e, reconcile.Action{Task: "SHAPE", Step: "s", Repo: repo, Spec: spec})
			var inv *reconcile.InvalidError
			if !errors.As(err, &inv) {
				t.Fatalf("ghcheck refuses it (%s), but the front door answered %v, want an *InvalidError", why, err)
			}
			if n := counted.claims.Load() - claims; n != 0 {
				t.Fatalf("the ledger was asked for %d claims, want none", n)
			}
		})
	}
	// The corpus must exercise the refusals, not only valid shapes.
	if refused < 100 {
		t.Fatalf("only %d candidates were refused by ghcheck; the corpus lost its bad shapes", refused)
	}
	if ents, err := l.List(w.ctx, ledger.ListParams{}); err != nil || len(ents) != 0 {
		t.Fatalf("ledger holds %d entries (%v), want none", len(ents), err)
	}
}

// Every kind on GitHub has shapes in the corpus, here or from its own test
// file (shapesOf): a kind without them would escape the test above.
func TestEveryKindOnGitHubHasShapes(t *testing.T) {
	t.Parallel()
	has := map[string]bool{}
	for _, spec := range shapeCandidates() {
		has[spec.Kind()] = true
	}
	for _, name := range kinds.All() {
		if k, _ := kinds.Lookup(name); k.OnGitHub && !has[name] {
			t.Errorf("kind %s has no shapes in shapeCandidates: add its good and bad values from its test file (shapesOf)", name)
		}
	}
}

// The issue's case, as a new user tried it: a directory is not a file.
func TestPrepareRefusesADirectoryPath(t *testing.T) {
	t.Parallel()
	_, err := reconcile.Prepare(reconcile.Action{Task: "T", Step: "s", Repo: repo,
		Spec: reconcile.File{Branch: "main", Path: "docs/", Message: "add", Content: []byte("x")}})
	var inv *reconcile.InvalidError
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "docs/") {
		t.Fatalf("Prepare(file docs/) = %v, want an *InvalidError naming the path", err)
	}
}

// A body of only whitespace, or of characters that render as nothing
// (zero-width spaces and joiners, a byte order mark, bidirectional marks,
// a soft hyphen, variation selectors, Hangul fillers, the blank braille
// pattern), is a comment GitHub would show as empty (the marker is hidden),
// and such a title is no title: Prepare, the one door every front (CLI, gh
// shim, MCP, library) goes through, refuses them as invalid input before
// anything is recorded.
func TestPrepareRefusesBlankText(t *testing.T) {
	t.Parallel()
	for _, blank := range []string{" ", "   ", "\n", "\t \r\n", "\u00a0", "\u3000\u2003",
		"\u200b", "\u200b\u200c\u200d", " \u2060\ufeff\n", "\u00ad\u200e\u200f\u202e\u2066", "\ufe0f\U000e0041", "\u3164\u115f\uffa0", "\u2800\u034f\u180e"} {
		for _, spec := range []reconcile.Spec{
			reconcile.Comment{Number: 1, Body: blank},
			reconcile.Issue{Title: blank, Body: "b"},
			reconcile.PR{Base: "main", Head: "topic", Title: blank},
		} {
			_, err := reconcile.Prepare(reconcile.Action{Task: "T", Step: "s", Repo: repo, Spec: spec})
			var inv *reconcile.InvalidError
			if !errors.As(err, &inv) || !strings.Contains(err.Error(), "empty") {
				t.Errorf("Prepare(%s %q) = %v, want an *InvalidError saying it is empty", spec.Kind(), blank, err)
			}
		}
	}
	// Text that shows, even if little: a word beside invisible characters,
	// an emoji with its variation selector, an Arabic number sign (a format
	// character that shows).
	for _, shows := range []string{" ok ", "\u200bok", "\u2764\ufe0f", "\u0600"} {
		if _, err := reconcile.Prepare(reconcile.Action{Task: "T", Step: "s", Repo: repo, Spec: reconcile.Comment{Number: 1, Body: shows}}); err != nil {
			t.Errorf("Prepare(comment %q) = %v, want it accepted", shows, err)
		}
	}
}
