package audit_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

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

// TestFindPeoplesCommits: a person's commit on one of two pull requests
// with one key makes it the kept one (their work is never the duplicate),
// and the other, another change, is reported as differing.
func TestFindPeoplesCommits(t *testing.T) {
	s, _, gh := newCorpus(t)
	const o, n = "octo", "commits"
	s.AddRepo(o, n, "main")
	feat := s.AddCommitBy(o, n, "main", audittest.Agent)
	k := audittest.Key(o, n, "pr", "pr", "")
	for _, b := range []string{"a", "b"} {
		s.SetRef(o, n, b, feat)
	}
	s.SeedPR(o, n, audittest.Agent, fixtures.SeedPR{Title: "Cache", Body: "x", Head: "a", Labels: []string{taskkey.Label(k)}})
	theirs := s.SeedPR(o, n, audittest.Agent, fixtures.SeedPR{Title: "Cache", Body: "x", Head: "b", Labels: []string{taskkey.Label(k)}})
	s.SetRef(o, n, "b", s.AddCommitBy(o, n, "b", audittest.Human))
	rep, err := audit.Find(context.Background(), gh, audit.Options{Repo: ghcheck.Repo{Owner: o, Name: n}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || rep.Groups[0].Keep.Number != theirs || !strings.Contains(rep.Groups[0].Keep.Human, "commits by "+audittest.Human) {
		t.Fatalf("groups %+v: want #%d kept for alice's commits", rep.Groups, theirs)
	}
	if d := rep.Groups[0].Duplicates[0]; d.Differs == "" {
		t.Errorf("#%d, another change, is not reported as differing", d.Number)
	}
}

// TestFindReleases: drafts a naive run left (GitHub lets drafts share a
// tag) group by the key their notes carry, or by the same author, tag,
// title and notes; a person's copy, or other notes, never.
func TestFindReleases(t *testing.T) {
	s, _, gh := newCorpus(t)
	const o, n = "octo", "releases"
	s.AddRepo(o, n, "main")
	mk := func(tok, tag, title, notes string) {
		c := github.NewClient(nil).WithAuthToken(tok)
		c.BaseURL, _ = c.BaseURL.Parse(s.URL())
		if _, _, err := c.Repositories.CreateRelease(context.Background(), o, n, &github.RepositoryRelease{TagName: &tag, Name: &title, Body: &notes, Draft: github.Bool(true)}); err != nil {
			t.Fatal(err)
		}
	}
	k := audittest.Key(o, n, "release-create", "release", "v2")
	mk(audittest.AgentToken, "v1", "One", "Notes.")
	mk(audittest.AgentToken, "v1", "One", "Notes.")
	mk(audittest.HumanToken, "v1", "One", "Notes.")
	mk(audittest.AgentToken, "v1", "One", "Other notes.")
	mk(audittest.AgentToken, "v2", "Two", taskkey.WithMarker(k, "First."))
	mk(audittest.AgentToken, "v2", "Two", taskkey.WithMarker(k, "Reworded."))
	rep, err := audit.Find(context.Background(), gh, audit.Options{Repo: ghcheck.Repo{Owner: o, Name: n}, Kinds: []string{"release"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed["releases"] != 6 || len(rep.Groups) != 2 {
		t.Fatalf("listed %d releases, %d groups; want 6 and 2: %+v", rep.Listed["releases"], len(rep.Groups), rep.Groups)
	}
	for _, g := range rep.Groups {
		d := g.Duplicates
		if g.Kind != "release" || len(d) != 1 || d[0].ID <= g.Keep.ID || d[0].Name != g.Keep.Name {
			t.Errorf("group %+v: want one newer duplicate of the kept release, of its tag", g)
		}
		switch g.Evidence {
		case audit.EvidenceExact:
			if g.Keep.Name != "v1" || d[0].Differs != "" {
				t.Errorf("exact group: kept %s, differs %q", g.Keep.Ref(g.Kind), d[0].Differs)
			}
		case audit.EvidenceKey:
			if g.Keep.Name != "v2" || d[0].Differs == "" {
				t.Errorf("key group: kept %s, differs %q; want v2's, the reworded one reported as differing", g.Keep.Ref(g.Kind), d[0].Differs)
			}
		}
	}
}

// A naive retry applied a label again after a person removed it: a labels
// group (asked for by --kind labels), the first add kept and the second
// reported, never open: a workflow that ran cannot be undone. A person's
// own re-adds are not ours.
func TestFindLabelsAppliedTwice(t *testing.T) {
	s := fixtures.NewServer(fixtures.Options{})
	t.Cleanup(s.Close)
	s.AddUser(audittest.Agent, audittest.AgentToken)
	s.AddUser(audittest.Human, audittest.HumanToken)
	s.AddRepo("octo", "labels", "main")
	n := s.SeedIssue("octo", "labels", audittest.Human, fixtures.SeedIssue{Title: "Crash on start"})
	for range 2 {
		s.SeedLabel("octo", "labels", n, audittest.Agent, "ready")
		s.RemoveLabel("octo", "labels", n, audittest.Human, "ready")
		s.SeedLabel("octo", "labels", n, audittest.Human, "bug")
		s.RemoveLabel("octo", "labels", n, audittest.Human, "bug")
	}
	gh, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: audittest.AgentToken, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	r := ghcheck.Repo{Owner: "octo", Name: "labels"}
	rep, err := audit.Find(context.Background(), gh, audit.Options{Repo: r})
	if err != nil || len(rep.Groups) != 0 {
		t.Fatalf("default kinds: %+v, %v; want no group (labels are asked for)", rep, err)
	}
	rep, err = audit.Find(context.Background(), gh, audit.Options{Repo: r, Kinds: []string{"labels"}})
	if err != nil {
		t.Fatal(err)
	}
	g := findGroup(rep, "labels", "#1")
	if len(rep.Groups) != 1 || g == nil || len(g.Duplicates) != 1 || !strings.Contains(g.Detail, `"ready"`) {
		t.Fatalf("groups %+v, want one for label ready on #1", rep.Groups)
	}
	if d := g.Duplicates[0]; d.Open || d.Differs == "" || rep.OpenDuplicates != 0 {
		t.Errorf("duplicate %+v (open duplicates %d): want reported, not open, never acted on", d, rep.OpenDuplicates)
	}
}
