package audit_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/audittest"
)

func newCorpus(t testing.TB) (*fixtures.Server, audittest.Corpus, *ghcheck.Client) {
	t.Helper()
	clock := audittest.NewClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	s := fixtures.NewServer(fixtures.Options{Now: clock.Now})
	t.Cleanup(s.Close)
	c := audittest.Seed(s, "octo", "corpus")
	gh, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: audittest.AgentToken, HTTPClient: &http.Client{Timeout: 10 * time.Second},
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return s, c, gh
}

// TestFindCorpus: every exact duplicate of the corpus is found with the
// right kept artifact, and no look-alike is: precision and recall 100%.
func TestFindCorpus(t *testing.T) {
	_, corpus, gh := newCorpus(t)
	rep, err := audit.Find(context.Background(), gh, audit.Options{Repo: ghcheck.Repo{Owner: corpus.Owner, Name: corpus.Name}})
	if err != nil {
		t.Fatal(err)
	}
	type pair struct{ kind, dup, keep string }
	var want, got []pair
	for _, g := range corpus.Groups {
		for _, d := range g.Duplicates {
			want = append(want, pair{g.Kind, d, g.Keep})
		}
	}
	for _, g := range rep.Groups {
		for _, d := range g.Duplicates {
			got = append(got, pair{g.Kind, d.Ref(g.Kind), g.Keep.Ref(g.Kind)})
		}
	}
	tp := 0
	for _, p := range got {
		if slices.Contains(want, p) {
			tp++
		} else {
			t.Errorf("found %s %s as a duplicate of %s: not one", p.kind, p.dup, p.keep)
		}
	}
	for _, p := range want {
		if !slices.Contains(got, p) {
			t.Errorf("missed %s %s, a duplicate of %s", p.kind, p.dup, p.keep)
		}
	}
	precision, recall := float64(tp)/float64(max(len(got), 1)), float64(tp)/float64(len(want))
	t.Logf("corpus: %d duplicates expected, %d found, precision %.0f%%, recall %.0f%%", len(want), len(got), 100*precision, 100*recall)
	if precision != 1 || recall != 1 {
		t.Fatalf("precision %.2f, recall %.2f: want 1 and 1", precision, recall)
	}
	for _, g := range rep.Groups {
		for _, d := range g.Duplicates {
			if slices.Contains(corpus.NotDuplicates, d.Ref(g.Kind)) {
				t.Errorf("look-alike %s grouped as a duplicate", d.Ref(g.Kind))
			}
		}
	}
	// Key groups come first, and each group says why its kept one is kept.
	seenExact := false
	for _, g := range rep.Groups {
		if g.Evidence == audit.EvidenceExact {
			seenExact = true
		} else if seenExact {
			t.Errorf("a %s group after an exact one: want strongest evidence first", g.Evidence)
		}
		if g.Rule == "" || g.Detail == "" {
			t.Errorf("group %+v: no rule or detail", g)
		}
	}
	for _, g := range corpus.Groups {
		rg := findGroup(rep, g.Kind, g.Keep)
		if rg == nil {
			continue
		}
		if got := rg.Keep.HumanTouched(); got != g.Human {
			t.Errorf("%s %s kept: human touched %v, want %v (%q)", g.Kind, g.Keep, got, g.Human, rg.Keep.Human)
		}
		for _, d := range rg.Duplicates {
			if d.Ours != g.Ours {
				t.Errorf("%s %s: ours %v, want %v", g.Kind, d.Ref(g.Kind), d.Ours, g.Ours)
			}
			if (d.Differs != "") != g.Differs {
				t.Errorf("%s %s: differs %q, want %v", g.Kind, d.Ref(g.Kind), d.Differs, g.Differs)
			}
		}
	}
	if rep.OpenDuplicates == 0 {
		t.Fatal("no open duplicate counted")
	}
	if len(rep.LookAlikes) == 0 {
		t.Error("the same titles by others and with other text are not listed as look-alikes")
	}
}

// TestFindNeverGroups: each case issue 31 reproduced (another author's
// marker, one text under two steps or two tasks, a recurrence, heads
// GitHub cannot return, branches ghonce did not make) is in no group,
// neither kept nor duplicate.
func TestFindNeverGroups(t *testing.T) {
	_, corpus, gh := newCorpus(t)
	rep, err := audit.Find(context.Background(), gh, audit.Options{Repo: ghcheck.Repo{Owner: corpus.Owner, Name: corpus.Name}})
	if err != nil {
		t.Fatal(err)
	}
	grouped := map[string]bool{}
	for _, g := range rep.Groups {
		grouped[g.Kind+" "+g.Keep.Ref(g.Kind)] = true
		for _, d := range g.Duplicates {
			grouped[g.Kind+" "+d.Ref(g.Kind)] = true
		}
	}
	for name, refs := range corpus.Never {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			for _, ref := range refs {
				for _, kind := range audit.AllKinds {
					if grouped[kind+" "+ref] {
						t.Errorf("%s is in a %s group", ref, kind)
					}
				}
			}
		})
	}
}

func findGroup(rep *audit.Report, kind, keep string) *audit.Group {
	for i, g := range rep.Groups {
		if g.Kind == kind && g.Keep.Ref(kind) == keep {
			return &rep.Groups[i]
		}
	}
	return nil
}

// TestFindKindsAndAuthors: --kind and --author narrow the report; a
// person's login groups nothing (only ours is ever grouped).
func TestFindKindsAndAuthors(t *testing.T) {
	_, corpus, gh := newCorpus(t)
	r := ghcheck.Repo{Owner: corpus.Owner, Name: corpus.Name}
	rep, err := audit.Find(context.Background(), gh, audit.Options{Repo: r, Kinds: []string{"comment"}, Authors: []string{audittest.Agent}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 2 || rep.Groups[0].Kind != "comment" || rep.Groups[1].Kind != "comment" {
		t.Fatalf("groups = %+v, want the agent's two comment groups alone", rep.Groups)
	}
	rep, err = audit.Find(context.Background(), gh, audit.Options{Repo: r, Authors: []string{audittest.Human}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 0 {
		t.Fatalf("groups by %s = %+v, want none", audittest.Human, rep.Groups)
	}
}

func TestNormalizeBody(t *testing.T) {
	for in, want := range map[string]string{
		"a\r\nb  \n\n": "a\nb",
		"<!-- ghonce:key=gk1_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa -->\nx": "x",
		"  x": "  x",
	} {
		if got := audit.NormalizeBody(in); got != want {
			t.Errorf("NormalizeBody(%q) = %q, want %q", in, got, want)
		}
	}
	if got := audit.NormalizeTitle("  a \t b "); got != "a b" || strings.Contains(got, "  ") {
		t.Errorf("NormalizeTitle = %q", got)
	}
}

// TestFindGroupsOnlyWhatCarriesTheKey: a ledger that records the key of
// the agent's comment on #1 for comments on #1 and #2 that do not carry
// it, and the key of its issue for an unrelated issue, groups none of
// them: a recorded key only keeps apart; and a comment carrying the key
// on #2 is no duplicate of the one on #1.
func TestFindGroupsOnlyWhatCarriesTheKey(t *testing.T) {
	s, _, gh := newCorpus(t)
	const o, n = "octo", "forged"
	s.AddRepo(o, n, "main")
	one := s.SeedIssue(o, n, audittest.Agent, fixtures.SeedIssue{Title: "Deploy", Body: "v2"})
	two := s.SeedIssue(o, n, audittest.Agent, fixtures.SeedIssue{Title: "Deploy staging", Body: "v2 first"})
	k := audittest.Key(o, n, "deployed", "comment", "1")
	s.SeedComment(o, n, one, audittest.Agent, taskkey.WithMarker(k, "Deployed."))
	same := s.SeedComment(o, n, one, audittest.Agent, "Deployed, with notes.")
	other := s.SeedComment(o, n, two, audittest.Agent, "Deployed.")
	s.SeedComment(o, n, two, audittest.Agent, taskkey.WithMarker(k, "Deployed to staging."))
	ik := audittest.Key(o, n, "tracking", "issue", "")
	s.SeedIssue(o, n, audittest.Agent, fixtures.SeedIssue{Title: "Track", Body: taskkey.WithMarker(ik, "Rollout."), Labels: []string{taskkey.Label(ik)}})
	unrelated := s.SeedIssue(o, n, audittest.Agent, fixtures.SeedIssue{Title: "Rotate the key", Body: "It expires."})
	forged := func(kind string, number int, id int64) string {
		switch {
		case kind == "comment" && (id == same || id == other):
			return k
		case kind == "issue" && number == unrelated:
			return ik
		}
		return ""
	}
	rep, err := audit.Find(context.Background(), gh, audit.Options{Repo: ghcheck.Repo{Owner: o, Name: n}, Recorded: forged})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range rep.Groups {
		t.Errorf("%s group kept %s with %d duplicate(s) (%s): want none", g.Kind, g.Keep.Ref(g.Kind), len(g.Duplicates), g.Detail)
	}
}
