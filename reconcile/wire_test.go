package reconcile_test

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// wireLatency is the fake's delay per request in the round-trip counts:
// far above scheduling delays on a busy machine, so that requests a client
// has open together overlap for certain, and below anything that makes
// the test slow.
const wireLatency = 100 * time.Millisecond

// writes counts the content-creating requests in reqs: every method but
// GET and HEAD, what GitHub's 80-a-minute, 500-an-hour limit counts.
func writes(reqs []fixtures.Request) int {
	n := 0
	for _, r := range reqs {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			n++
		}
	}
	return n
}

// onWire runs fn and returns the requests the fake received meanwhile.
func (w *world) onWire(fn func()) []fixtures.Request {
	w.t.Helper()
	w.GitHub.WaitIdle()
	before := len(w.GitHub.Requests())
	fn()
	w.GitHub.WaitIdle()
	return w.GitHub.Requests()[before:]
}

func describe(reqs []fixtures.Request) string {
	var b strings.Builder
	for _, r := range reqs {
		b.WriteString("\n\t" + r.Method + " " + r.Path)
		if r.RawQuery != "" {
			b.WriteString("?" + r.RawQuery)
		}
		b.WriteString(" [+" + r.Start.Sub(reqs[0].Start).Round(10*time.Millisecond).String() + "]")
	}
	return b.String()
}

// What a first create costs on the wire, per kind (its example), on an
// established ledger (an earlier run cached the login), at wireLatency per
// request: content-creating requests (the write budget: 1, and 2 for a
// kind that tags its artifact after the create (a Mender: a pull
// request's labels); the look-up writes nothing, the key's label is made
// by GitHub as the create applies it) and round trips one after another
// before the answer: 2 for every kind, a pull request too (its labels
// follow the answer, AnswerBeforeTags) and a branch from a ref (the ref is
// resolved while the branch is looked for). Then, with the ledger lost,
// the same action finds what the first made, and writes nothing. A kind's
// other shapes are in its own test file (TestWirePR...).
func TestWireFirstCreate(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.SeedExamples()
	w.establish()
	for kind, spec := range examples(t) {
		_, mends := spec.(reconcile.Mender)
		w.wireFirstCreate(t, wireCase{name: kind, spec: spec, writes: 1 + btoi(mends), trips: 2, early: true})
	}
	// GitHub made the key labels as the creates applied them, in the key
	// label's colour.
	for _, l := range w.GitHub.Labels(owner, name) {
		if strings.HasPrefix(l.Name, "ghonce:") && l.Color != "ededed" {
			t.Errorf("label %s: colour %s, want ededed", l.Name, l.Color)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// wireCase is a first create TestWireFirstCreate measures.
type wireCase struct {
	name       string
	spec, lost reconcile.Spec // lost: the rerun's description, when another
	// writes and trips bound its content-creating requests and its round
	// trips one after another before the answer; early is
	// Config.AnswerBeforeTags.
	writes, trips int
	early         bool
}

// wireFirstCreate makes tc's first create and finds it with the ledger
// lost, as TestWireFirstCreate says.
func (w *world) wireFirstCreate(t *testing.T, tc wireCase) {
	t.Run(tc.name, func(t *testing.T) {
		a := reconcile.Action{Task: "WIRE", Step: tc.name, Repo: repo, Spec: tc.spec}
		e, l := w.budgetEngine(func(c *reconcile.Config, _ *ghcheck.Options) { c.AnswerBeforeTags = tc.early })
		r, reqs, trips := w.created(t, e, a)
		l.Close()
		got := writes(reqs)
		t.Logf("first %s create on an established ledger: %d requests, %d content-creating, %d round trips one after another before the answer%s",
			tc.name, len(reqs), got, trips, describe(reqs))
		if got > tc.writes {
			t.Errorf("first %s create: %d content-creating requests, want at most %d", tc.name, got, tc.writes)
		}
		if trips > tc.trips {
			t.Errorf("first %s create: %d round trips one after another before the answer, want at most %d", tc.name, trips, tc.trips)
		}
		if reconcile.CarriesKeyLabel(tc.spec.Kind()) {
			w.wantLabels(t, r.Number, r.Key, tc.spec)
		}

		// The ledger lost: a new one finds the artifact, by a look-up
		// that writes nothing.
		w.GitHub.SetLatency(0)
		lost, tw := *w, *w.World
		tw.Ledger = t.TempDir() + "/lost.db"
		lost.World = &tw
		e2, l2 := lost.budgetEngine()
		defer l2.Close()
		if tc.lost != nil {
			a.Spec = tc.lost
		}
		reqs = w.onWire(func() {
			if r2, err := do(w.ctx, e2, a); err != nil || r2.Outcome != outcome.Found || r2.Number != r.Number || r2.SHA != r.SHA {
				t.Fatalf("%s with the ledger lost: %+v, %v, want found: %+v", tc.name, r2, err, r)
			}
		})
		t.Logf("%s with the ledger lost: %d requests, %d content-creating%s", tc.name, len(reqs), writes(reqs), describe(reqs))
		if n := writes(reqs); n != 0 {
			t.Errorf("%s with the ledger lost: %d content-creating requests, want 0 (a look-up never writes)", tc.name, n)
		}
	})
}

// created runs a's first create on e at wireLatency per request, wants it
// created, and returns its result, every request it sent (those after the
// answer too: e.Wait) and the round trips one after another among the
// requests answered before the answer: at wireLatency, one sent after the
// answer (a pull request's labels) cannot be answered before it.
func (w *world) created(t *testing.T, e *reconcile.Engine, a reconcile.Action) (*outcome.Result, []fixtures.Request, int) {
	t.Helper()
	w.GitHub.SetLatency(wireLatency)
	defer w.GitHub.SetLatency(0)
	var answered time.Time
	var r *outcome.Result
	reqs := w.onWire(func() {
		var err error
		if r, err = do(w.ctx, e, a); err != nil || r.Outcome != outcome.Created {
			t.Fatalf("first create of %s: %+v, %v", a.Step, r, err)
		}
		answered = time.Now()
		e.Wait()
	})
	var before []fixtures.Request
	for _, q := range reqs {
		if q.End.Before(answered) {
			before = append(before, q)
		}
	}
	return r, reqs, fixtures.RoundTrips(before)
}

// wantLabels fails unless issue or pull request n carries key's label and
// the labels spec names.
func (w *world) wantLabels(t *testing.T, n int, key string, spec reconcile.Spec) {
	t.Helper()
	var have []string
	for _, is := range w.GitHub.Issues(owner, name) {
		if is.Number == n {
			have = is.Labels
		}
	}
	for _, pr := range w.GitHub.PullRequests(owner, name) {
		if pr.Number == n {
			have = pr.Labels
		}
	}
	var named struct{ Labels []string }
	b, _ := json.Marshal(spec)
	_ = json.Unmarshal(b, &named)
	for _, want := range append(named.Labels, taskkey.Label(key)) {
		if !slices.ContainsFunc(have, func(l string) bool { return strings.EqualFold(l, want) }) {
			t.Errorf("#%d lacks label %s once the create's tail is written", n, want)
		}
	}
}

// Where the ledger vouches that no attempt of the key was ever made
// (--trust-ledger: TrustNeverAttempted, on an established ledger, for a key
// the claim just entered), the create follows no look-up: one round trip
// before the answer, a pull request's labels after it; a branch from a ref
// two (its commit must be resolved first), and a file two (its write names
// the blob it replaces). On a local SQLite ledger and on
// a shared Postgres one (GHONCE_TEST_POSTGRES) alike. On a ledger this
// process created (an earlier one may be lost) the trust is not applied:
// the look-up runs.
func TestWireTrustedFirstCreate(t *testing.T) {
	t.Parallel()
	ledgers := map[string]string{"sqlite": ""}
	if os.Getenv("GHONCE_TEST_POSTGRES") != "" || os.Getenv("CI") == "true" {
		ledgers["postgres"] = pgtest.Schema(t)
	}
	for name, loc := range ledgers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			if loc != "" {
				w.Ledger = loc
			}
			w.establish()
			w.Push("trust-head")
			thread := w.issue()
			for _, tc := range []struct {
				name  string
				spec  reconcile.Spec
				trips int
			}{
				{"pr", reconcile.PR{Base: "main", Head: "trust-head", Title: "t", Body: "b", Labels: []string{"agent"}}, 1},
				{"issue", reconcile.Issue{Title: "t", Body: "b", Labels: []string{"agent"}}, 1},
				{"comment", reconcile.Comment{Number: thread, Body: "b"}, 1},
				{"branch", reconcile.Branch{Name: "trust-branch", SHA: w.Main}, 1},
				{"branch from a ref", reconcile.Branch{Name: "trust-from", From: "main"}, 2},
				// A file's write names the blob it replaces, which GitHub
				// requires: it is read first, trusted or not.
				{"file", reconcile.File{Branch: "main", Path: "trust.txt", Message: "m", Content: []byte("x")}, 2},
			} {
				a := reconcile.Action{Task: "TRUST", Step: tc.name, Repo: repo, Spec: tc.spec}
				e, l := w.budgetEngine(func(c *reconcile.Config, _ *ghcheck.Options) { c.TrustNeverAttempted, c.AnswerBeforeTags = true, true })
				if v, ok := l.(interface{ CannotVouch() bool }); !ok || v.CannotVouch() {
					t.Fatalf("%s: the ledger cannot vouch, want the established one", tc.name)
				}
				r, reqs, trips := w.created(t, e, a)
				l.Close()
				t.Logf("trusted first %s create: %d requests, %d round trips before the answer%s", tc.name, len(reqs), trips, describe(reqs))
				if trips > tc.trips {
					t.Errorf("trusted first %s create: %d round trips before the answer, want at most %d", tc.name, trips, tc.trips)
				}
				if tc.name == "pr" {
					w.wantLabels(t, r.Number, r.Key, tc.spec)
				}
			}

			// A ledger this process creates cannot vouch: the look-up runs
			// and finds what the trusted run made.
			if loc == "" {
				fresh, tw := *w, *w.World
				tw.Ledger = t.TempDir() + "/fresh.db"
				fresh.World = &tw
				e, l := fresh.budgetEngine(func(c *reconcile.Config, _ *ghcheck.Options) { c.TrustNeverAttempted = true })
				defer l.Close()
				a := reconcile.Action{Task: "TRUST", Step: "issue", Repo: repo, Spec: reconcile.Issue{Title: "t", Body: "b", Labels: []string{"agent"}}}
				if r, err := do(w.ctx, e, a); err != nil || r.Outcome != outcome.Found {
					t.Fatalf("--trust-ledger on a new ledger: %+v, %v, want found (no trust without an established ledger)", r, err)
				}
			}
		})
	}
}
