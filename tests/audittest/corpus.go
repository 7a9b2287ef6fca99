// Package audittest lays out, on the fake GitHub, a repository with exact
// duplicates of issues, comments and pull requests side by side, and
// look-alikes that are not duplicates, and says which are which:
// the corpus `ghonce audit` is measured on. Each audited kind's example
// made twice is internal/audit's TestEveryKindsExampleMadeTwice; a shape
// of one kind alone is in that kind's own test file.
package audittest

import (
	"fmt"
	"sync"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/taskkey"
)

// Logins of the corpus: Agent is the token's identity (ours), Human a
// person, Other another bot.
const (
	Agent      = "naive-agent"
	AgentToken = "tok-naive-agent"
	Human      = "alice"
	HumanToken = "tok-alice"
	Other      = "other-bot"
)

// Clock is a clock that moves one second each time it is read, so that
// every artifact has its own created_at.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts a Clock at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Add moves the clock on by d: what happened before is that much older.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// Now returns the time and moves the clock on by a second.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// Group is an expected group: its kind, the kept artifact and the
// duplicates, each named as audit.Artifact.Ref names it ("#3",
// "comment 2200000004 on #1", "branch x").
type Group struct {
	Kind       string
	Keep       string
	Duplicates []string
	// Ours: the duplicates are the agent's, so --apply settles them.
	Ours bool
	// Human: the kept one has human activity (a person's comment,
	// review, or a pull request for a branch).
	Human bool
	// Differs: the duplicates share the kept one's key, not its text, so
	// --apply reports them and leaves them for a person.
	Differs bool
}

// Corpus is what Seed laid out.
type Corpus struct {
	Owner, Name string
	Groups      []Group
	// NotDuplicates names the look-alikes: no group may hold them as a
	// duplicate.
	NotDuplicates []string
	// Never names, by what issue 31 found audit --apply destroying, the
	// artifacts no group may hold at all, kept or duplicate.
	Never map[string][]string
}

// Seed lays the corpus out in owner/name on s (it makes the repository
// and the users Agent and Human).
func Seed(s *fixtures.Server, owner, name string) Corpus {
	s.AddUser(Agent, AgentToken)
	s.AddUser(Human, HumanToken)
	s.AddRepo(owner, name, "main")
	c := Corpus{Owner: owner, Name: name}
	num := func(n int) string { return fmt.Sprintf("#%d", n) }
	issue := func(login, title, body string, labels ...string) int {
		return s.SeedIssue(owner, name, login, fixtures.SeedIssue{Title: title, Body: body, Labels: labels})
	}
	cref := func(id int64, n int) string { return fmt.Sprintf("comment %d on #%d", id, n) }

	// Issues: the same title and body three times (one with its own
	// marker, one with other white space), beside the same title and body
	// by a person and the same title with other text.
	i1 := issue(Agent, "Fix flaky test in ledger", "The test `TestClaim` fails one run in ten.\n\nSeen on CI.")
	i2 := issue(Agent, "Fix flaky test in ledger", taskkey.Marker(Key(owner, name, "attempt-2", "issue", ""))+"\nThe test `TestClaim` fails one run in ten.\n\nSeen on CI.")
	i3 := issue(Agent, "  Fix flaky  test in ledger ", "The test `TestClaim` fails one run in ten.  \r\n\r\nSeen on CI.\n")
	h1 := issue(Human, "Fix flaky test in ledger", "The test `TestClaim` fails one run in ten.\n\nSeen on CI.")
	o1 := issue(Agent, "Fix flaky test in ledger", "The test `TestClaim` fails one run in five.\n\nSeen on CI.")
	c.Groups = append(c.Groups, Group{Kind: "issue", Keep: num(i1), Duplicates: []string{num(i2), num(i3)}, Ours: true, Human: true})
	c.NotDuplicates = append(c.NotDuplicates, num(h1), num(o1))

	// Two issues with one ghonce key (marker and label) and other titles:
	// the key is the evidence, and the text differs: reported, not closed.
	k := Key(owner, name, AdoptStep, "issue", "")
	ik1 := issue(Agent, AdoptTitle, taskkey.WithMarker(k, AdoptBody), taskkey.Label(k))
	ik2 := issue(Agent, "Track release 1.2", taskkey.WithMarker(k, "Release 1.2, with notes."), taskkey.Label(k))
	c.Groups = append(c.Groups, Group{Kind: "issue", Keep: num(ik1), Duplicates: []string{num(ik2)}, Ours: true, Differs: true})

	// The same issue twice, and a person answered on the newer: it is kept.
	d1 := issue(Agent, "Docs: typo in README", "\"recieve\" should be \"receive\".")
	d2 := issue(Agent, "Docs: typo in README", "\"recieve\" should be \"receive\".")
	s.SeedComment(owner, name, d2, Human, "Good catch, I'll take this one.")
	c.Groups = append(c.Groups, Group{Kind: "issue", Keep: num(d2), Duplicates: []string{num(d1)}, Ours: true, Human: true})

	// Comments: the same body twice on one thread, beside the same body on
	// another thread and by a person.
	c1 := s.SeedComment(owner, name, i1, Agent, "Build passed: 312 tests.")
	c2 := s.SeedComment(owner, name, i1, Agent, "Build passed: 312 tests.")
	c3 := s.SeedComment(owner, name, o1, Agent, "Build passed: 312 tests.")
	c4 := s.SeedComment(owner, name, i1, Human, "Build passed: 312 tests.")
	c.Groups = append(c.Groups, Group{Kind: "comment", Keep: cref(c1, i1), Duplicates: []string{cref(c2, i1)}, Ours: true})
	c.NotDuplicates = append(c.NotDuplicates, cref(c3, o1), cref(c4, i1))
	// Two comments with one key and other text: reported, not deleted.
	ck := Key(owner, name, "comment", "comment", fmt.Sprint(ik1))
	ck1 := s.SeedComment(owner, name, ik1, Agent, taskkey.WithMarker(ck, "Released."))
	ck2 := s.SeedComment(owner, name, ik1, Agent, taskkey.WithMarker(ck, "Released, see notes."))
	c.Groups = append(c.Groups, Group{Kind: "comment", Keep: cref(ck1, ik1), Duplicates: []string{cref(ck2, ik1)}, Ours: true, Differs: true})

	// Pull requests: one commit on two branches, and the same tree on a
	// third, each with the same PR; beside the same title on another
	// commit and a person's PR.
	feat := s.AddCommitBy(owner, name, "main", Agent)
	for _, b := range []string{"agent/feature-1", "agent/feature-2", "agent/stray-1", "agent/stray-2"} {
		s.SetRef(owner, name, b, feat)
	}
	s.SetRef(owner, name, "agent/feature-3", s.AddCommitSameTree(owner, name, feat, Agent))
	s.SetRef(owner, name, "agent/other", s.AddCommitBy(owner, name, "main", Agent))
	s.SetRef(owner, name, "alice/feature", s.AddCommitBy(owner, name, "main", Human))
	pr := func(login, head, title string) int {
		return s.SeedPR(owner, name, login, fixtures.SeedPR{Title: title, Body: "Adds the feature.", Head: head})
	}
	p1 := pr(Agent, "agent/feature-1", "Add the feature")
	p2 := pr(Agent, "agent/feature-2", "Add the feature")
	p3 := pr(Agent, "agent/feature-3", "Add the feature (retry)")
	p4 := pr(Agent, "agent/other", "Add the feature")
	p5 := pr(Human, "alice/feature", "Add the feature")
	// A person reviewed the second: it is kept.
	s.SeedReview(owner, name, p2, Human, "COMMENTED", "Why two?")
	c.Groups = append(c.Groups, Group{Kind: "pr", Keep: num(p2), Duplicates: []string{num(p1), num(p3)}, Ours: true, Human: true})
	c.NotDuplicates = append(c.NotDuplicates, num(p4), num(p5))

	// Branches are never grouped: agent/stray-1 and -2 sit at the PRs'
	// commit with no PR, but no ghonce run made them (a branch is ours
	// only if ghonce made it, never by its head commit's author); a
	// person's two branches at one commit, and a person's staging and
	// release-1 at a commit the agent wrote, are a person's.
	s.SetRef(owner, name, "agent/lonely", s.AddCommitBy(owner, name, "main", Agent))
	wip := s.AddCommitBy(owner, name, "main", Human)
	s.SetRef(owner, name, "alice/wip", wip)
	s.SetRef(owner, name, "alice/wip-copy", wip)
	s.SetRef(owner, name, "staging", feat)
	s.SetRef(owner, name, "release-1", feat)
	c.NotDuplicates = append(c.NotDuplicates, "branch agent/lonely", "branch agent/other", "branch main", "branch agent/stray-1", "branch agent/stray-2",
		"branch alice/wip-copy", "branch staging", "branch release-1")
	c.Never = map[string][]string{"a branch ghonce did not make": {"branch agent/stray-1", "branch agent/stray-2", "branch alice/wip",
		"branch alice/wip-copy", "branch staging", "branch release-1", "branch agent/feature-1"}}

	trust(s, owner, name, &c, feat)
	return c
}

// The naive run's task, and the step, title and body of the issue it
// filed twice under one key: `ghonce issue create` with them finds the
// kept issue's key done once --apply adopted it.
const (
	NaiveTask  = "naive-run"
	AdoptStep  = "issue-create"
	AdoptTitle = "Track the release"
	AdoptBody  = "Release 1.2."
)

// Key is the key the naive run's step gave an artifact of kind in
// owner/name.
func Key(owner, name, step, kind, target string) string {
	return taskkey.Key(taskkey.Identity{Task: NaiveTask, Step: step, Kind: kind, Repo: owner + "/" + name, Target: target})
}

// trust lays out what issue 31 found audit --apply destroying: artifacts
// that look like duplicates of the agent's and are not (NotDuplicates),
// and duplicates a person cares about (kept).
func trust(s *fixtures.Server, owner, name string, c *Corpus, feat string) {
	num := func(n int) string { return fmt.Sprintf("#%d", n) }
	cref := func(id int64, n int) string { return fmt.Sprintf("comment %d on #%d", id, n) }
	issue := func(login, title, body string, labels ...string) int {
		return s.SeedIssue(owner, name, login, fixtures.SeedIssue{Title: title, Body: body, Labels: labels})
	}

	// Another author's marker: a person copies the marker of the agent's
	// comment (and of its issue) onto artifacts of their own, and reacts
	// to them; a key on someone else's artifact proves nothing.
	tk := Key(owner, name, "status", "issue", "")
	ti := issue(Agent, "Status of the migration", taskkey.WithMarker(tk, "Running."), taskkey.Label(tk))
	tc := Key(owner, name, "progress", "comment", fmt.Sprint(ti))
	agentC := s.SeedComment(owner, name, ti, Agent, taskkey.WithMarker(tc, "Step 1 of 3 done."))
	fakeC := s.SeedComment(owner, name, ti, Human, taskkey.WithMarker(tc, "Step 1 of 3 done."))
	s.SeedReaction(owner, name, ti, fakeC, Human, "+1")
	fakeI := issue(Human, "Status of the migration", taskkey.WithMarker(tk, "Running."))
	s.SeedReaction(owner, name, fakeI, 0, Human, "heart")
	c.NotDuplicates = append(c.NotDuplicates, cref(agentC, ti), cref(fakeC, ti), num(ti), num(fakeI))
	c.Never["another author's marker"] = []string{cref(agentC, ti), cref(fakeC, ti), num(ti), num(fakeI)}

	// What ghonce recorded as different: "CI passed." after two CI runs
	// (two steps), two nightly tasks' issues with one text, and an issue
	// filed again after a person closed the first as completed.
	ci1 := s.SeedComment(owner, name, ti, Agent, taskkey.WithMarker(Key(owner, name, "ci-run-1", "comment", fmt.Sprint(ti)), "CI passed."))
	ci2 := s.SeedComment(owner, name, ti, Agent, taskkey.WithMarker(Key(owner, name, "ci-run-2", "comment", fmt.Sprint(ti)), "CI passed."))
	c.NotDuplicates = append(c.NotDuplicates, cref(ci1, ti), cref(ci2, ti))
	c.Never["one text under two steps"] = []string{cref(ci1, ti), cref(ci2, ti)}
	night := func(task string) int {
		k := taskkey.Key(taskkey.Identity{Task: task, Step: "report", Kind: "issue", Repo: owner + "/" + name})
		return issue(Agent, "Nightly report", taskkey.WithMarker(k, "All green."), taskkey.Label(k))
	}
	n1, n2 := night("nightly-2026-11-01"), night("nightly-2026-11-02")
	c.NotDuplicates = append(c.NotDuplicates, num(n1), num(n2))
	c.Never["one text for two tasks"] = []string{num(n1), num(n2)}
	r1 := s.SeedIssue(owner, name, Agent, fixtures.SeedIssue{Title: "Disk almost full on runner-3", Body: "95% used.", State: "closed"})
	r2 := issue(Agent, "Disk almost full on runner-3", "95% used.")
	c.NotDuplicates = append(c.NotDuplicates, num(r1), num(r2))
	c.Never["a recurrence after a close as completed"] = []string{num(r1), num(r2)}

	// Pull requests whose head commits GitHub cannot return: an unknown
	// tree is not the same tree.
	for _, b := range []string{"agent/gone-1", "agent/gone-2"} {
		s.SetRef(owner, name, b, s.AddCommitBy(owner, name, "main", Agent))
	}
	g1 := s.SeedPR(owner, name, Agent, fixtures.SeedPR{Title: "Refactor", Body: "Same change.", Head: "agent/gone-1"})
	g2 := s.SeedPR(owner, name, Agent, fixtures.SeedPR{Title: "Refactor", Body: "Same change.", Head: "agent/gone-2"})
	for _, pr := range s.PullRequests(owner, name) {
		if pr.Number == g1 || pr.Number == g2 {
			s.ForgetCommit(owner, name, pr.HeadSHA)
		}
	}
	c.NotDuplicates = append(c.NotDuplicates, num(g1), num(g2))
	c.Never["heads GitHub cannot return"] = []string{num(g1), num(g2)}

	// A person cares about the newer of two duplicates, by a label, a
	// reference from their own issue, or a reaction: it is kept. The
	// agent's own reaction is nobody's.
	for i, mark := range []func(n int){
		func(n int) { s.SeedLabel(owner, name, n, Human, "bug") },
		func(n int) { issue(Human, "Seen in production", fmt.Sprintf("Same as #%d.", n)) },
		func(n int) { s.SeedReaction(owner, name, n, 0, Human, "+1") },
	} {
		title := fmt.Sprintf("Upgrade dependency %d", i+1)
		old := issue(Agent, title, "It is out of date.")
		s.SeedReaction(owner, name, old, 0, Agent, "eyes")
		newer := issue(Agent, title, "It is out of date.")
		mark(newer)
		c.Groups = append(c.Groups, Group{Kind: "issue", Keep: num(newer), Duplicates: []string{num(old)}, Ours: true, Human: true})
	}
}
