package reconcile_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/reconcile"
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

// What a first create costs on the wire, per kind, on an established
// ledger (an earlier run cached the login), at wireLatency per request:
// content-creating requests (the write budget: PR ≤ 2, the others ≤ 1; the
// look-up writes nothing, the key's label is made by GitHub as the create
// applies it) and round trips one after another (PR ≤ 3, the others ≤ 2:
// look-ups that do not depend on each other run together). Then, with the
// ledger lost, the same action finds what the first made and writes
// nothing.
func TestWireFirstCreate(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.establish()
	w.Push("wire-head")
	thread := w.issue()
	for _, tc := range []struct {
		kind          string
		spec          reconcile.Spec
		writes, trips int
		labelled      bool
	}{
		{"pr", reconcile.PR{Base: "main", Head: "wire-head", Title: "t", Body: "b", Labels: []string{"agent"}}, 2, 3, true},
		{"issue", reconcile.Issue{Title: "t", Body: "b", Labels: []string{"agent"}}, 1, 2, true},
		{"comment", reconcile.Comment{Number: thread, Body: "b"}, 1, 2, false},
		{"branch", reconcile.Branch{Name: "wire-branch", SHA: w.Main}, 1, 2, false},
		{"file", reconcile.File{Branch: "main", Path: "wire.txt", Message: "m", Content: []byte("x")}, 1, 2, false},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			a := reconcile.Action{Task: "WIRE", Step: tc.kind, Repo: repo, Spec: tc.spec}
			e, l := w.budgetEngine()
			w.GitHub.SetLatency(wireLatency)
			defer w.GitHub.SetLatency(0)
			reqs := w.onWire(func() {
				if r, err := do(w.ctx, e, a); err != nil || r.Outcome != reconcile.Created {
					t.Fatalf("first %s create: %+v, %v", tc.kind, r, err)
				}
			})
			l.Close()
			got, trips := writes(reqs), fixtures.RoundTrips(reqs)
			t.Logf("first %s create on an established ledger: %d requests, %d content-creating, %d round trips one after another%s",
				tc.kind, len(reqs), got, trips, describe(reqs))
			if got > tc.writes {
				t.Errorf("first %s create: %d content-creating requests, want at most %d", tc.kind, got, tc.writes)
			}
			if trips > tc.trips {
				t.Errorf("first %s create: %d round trips one after another, want at most %d", tc.kind, trips, tc.trips)
			}

			// The ledger lost: a new one finds the artifact, by a look-up
			// that writes nothing.
			w.GitHub.SetLatency(0)
			lost, tw := *w, *w.World
			tw.Ledger = t.TempDir() + "/lost.db"
			lost.World = &tw
			e2, l2 := lost.budgetEngine()
			defer l2.Close()
			reqs = w.onWire(func() {
				if r, err := do(w.ctx, e2, a); err != nil || r.Outcome != reconcile.Found {
					t.Fatalf("%s with the ledger lost: %+v, %v, want found", tc.kind, r, err)
				}
			})
			t.Logf("%s with the ledger lost: %d requests, %d content-creating%s", tc.kind, len(reqs), writes(reqs), describe(reqs))
			if n := writes(reqs); n != 0 {
				t.Errorf("%s with the ledger lost: %d content-creating requests, want 0 (a look-up never writes)", tc.kind, n)
			}
		})
	}
	// GitHub made the key labels as the creates applied them, in the key
	// label's colour.
	for _, l := range w.GitHub.Labels(owner, name) {
		if strings.HasPrefix(l.Name, "ghonce:") && l.Color != "ededed" {
			t.Errorf("label %s: colour %s, want ededed", l.Name, l.Color)
		}
	}
}
