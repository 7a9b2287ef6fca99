// Package audittest lays out, on the fake GitHub, a repository with exact
// duplicates of every kind beside look-alikes that are not duplicates, and
// says which are which: the corpus `ghonce audit` is measured on.
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
}

// Corpus is what Seed laid out.
type Corpus struct {
	Owner, Name string
	Groups      []Group
	// NotDuplicates names the look-alikes: no group may hold them as a
	// duplicate.
	NotDuplicates []string
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
	// the key is the evidence.
	k := Key(owner, name, AdoptStep, "issue", "")
	ik1 := issue(Agent, AdoptTitle, taskkey.WithMarker(k, AdoptBody), taskkey.Label(k))
	ik2 := issue(Agent, "Track release 1.2", taskkey.WithMarker(k, "Release 1.2, with notes."), taskkey.Label(k))
	c.Groups = append(c.Groups, Group{Kind: "issue", Keep: num(ik1), Duplicates: []string{num(ik2)}, Ours: true})

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
	// Two comments with one key and other text.
	ck := Key(owner, name, "comment", "comment", fmt.Sprint(ik1))
	ck1 := s.SeedComment(owner, name, ik1, Agent, taskkey.WithMarker(ck, "Released."))
	ck2 := s.SeedComment(owner, name, ik1, Agent, taskkey.WithMarker(ck, "Released, see notes."))
	c.Groups = append(c.Groups, Group{Kind: "comment", Keep: cref(ck1, ik1), Duplicates: []string{cref(ck2, ik1)}, Ours: true})

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

	// Branches: two more at the PRs' commit with no PR (strays), beside a
	// lone branch with no PR; and a person's two strays.
	c.Groups = append(c.Groups, Group{Kind: "branch", Keep: "branch agent/feature-1", Duplicates: []string{"branch agent/stray-1", "branch agent/stray-2"}, Ours: true, Human: true})
	s.SetRef(owner, name, "agent/lonely", s.AddCommitBy(owner, name, "main", Agent))
	wip := s.AddCommitBy(owner, name, "main", Human)
	s.SetRef(owner, name, "alice/wip", wip)
	s.SetRef(owner, name, "alice/wip-copy", wip)
	c.Groups = append(c.Groups, Group{Kind: "branch", Keep: "branch alice/wip", Duplicates: []string{"branch alice/wip-copy"}})
	c.NotDuplicates = append(c.NotDuplicates, "branch agent/lonely", "branch agent/other", "branch main")
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
