// Package audit finds the duplicates that runs without ghonce left on a
// repository, by evidence only: artifacts that carry the same ghonce key,
// and artifacts that are exactly alike (the same author, byte-identical
// normalised text, the same thread or base, the same commit or tree). It
// never groups by similarity: other text or another author is never a
// duplicate, however close.
//
// What it groups is held to the bar of a tool that deletes: only
// artifacts our identity (or a trusted login) wrote are ever grouped or
// kept, a key seen on someone else's artifact proves nothing, a key groups
// only what carries it (a ledger entry's only keeps apart) and never
// across threads; two artifacts the ledger or their own markers record
// under different keys are two effects; an issue a person closed as
// completed is never the duplicate of a later one (a recurrence); a head
// commit GitHub cannot return proves nothing; branches are never grouped
// (every branch ghonce makes is its own key's, and any other is not
// ours). What people did to
// a grouped artifact is read whole, whatever --since says: comments,
// reviews, labels, references and reactions by a person, commits and
// force-pushes by anyone but us. A duplicate that is not the kept one byte
// for byte (Artifact.Differs) is reported, never removed.
//
// Find only reads, through consistent paginated listings (never search):
// the repository's issues, pull requests and comments since a time, each
// in one listing, then the timeline (and reactions) of each artifact that
// may group. Recheck reads a duplicate and its kept artifact again right
// before a write; the CLI performs the writes through the engine.
package audit

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
)

// Kinds of artifact, as --kind and the report name them.
const (
	KindIssue   = "issue"
	KindPR      = "pr"
	KindComment = "comment"
	KindReview  = "review"
	KindBranch  = "branch"
	KindRelease = "release"
	// KindLabels groups a label our identity applied to one issue or pull
	// request more than once (added again after a person removed it): its
	// labeled workflows ran each time. Nothing can be undone, so it is
	// reported only, and read only when asked for (--kind labels): it
	// reads the timeline of every issue and pull request listed.
	KindLabels = "labels"
	// KindReviewComment is an inline comment on a pull request's diff:
	// its groups are reported, never acted on (--apply leaves them).
	KindReviewComment = "review-comment"
)

// AllKinds lists the kinds in the order groups are reported.
var AllKinds = []string{KindIssue, KindPR, KindComment, KindReviewComment, KindReview, KindBranch, KindRelease, KindLabels}

// defaultKinds are the kinds Find looks at when Options.Kinds is empty:
// all but labels.
var defaultKinds = AllKinds[:7]

// Evidence, strongest first.
const (
	EvidenceKey   = "key"
	EvidenceExact = "exact"
)

// KeepRule is how the kept artifact of a group is chosen.
const KeepRule = "the oldest, unless it has no human activity and a newer one has (comments, reviews, labels, reactions or references by a person, a linked pull request, a merge): then the oldest of those"

// AckLabel is the label a person adds to a duplicate (an issue or a pull
// request; for a comment, its thread) that audit leaves alone, to say
// "seen, keep both": the duplicate is reported as acknowledged and no
// longer makes audit exit 6. Only a label a person added counts.
const AckLabel = "ghonce-audit:keep"

// GitHub is what Find reads. *ghcheck.Client implements it.
type GitHub interface {
	Login(ctx context.Context) (string, error)
	Ours(ctx context.Context, login string) (bool, error)
	ListIssuesSince(ctx context.Context, r ghcheck.Repo, since time.Time, onPage ghcheck.OnPage) ([]ghcheck.Listed, error)
	ListPullsSince(ctx context.Context, r ghcheck.Repo, since time.Time, onPage ghcheck.OnPage) ([]ghcheck.Listed, error)
	ListCommentsSince(ctx context.Context, r ghcheck.Repo, since time.Time, onPage ghcheck.OnPage) ([]ghcheck.Listed, error)
	ListReviewCommentsSince(ctx context.Context, r ghcheck.Repo, since time.Time, onPage ghcheck.OnPage) ([]ghcheck.Listed, error)
	GetCommitInfo(ctx context.Context, r ghcheck.Repo, sha string) (ghcheck.Commit, error)
	PullCommits(ctx context.Context, r ghcheck.Repo, number int) ([]ghcheck.Commit, error)
	Timeline(ctx context.Context, r ghcheck.Repo, number int) ([]ghcheck.Event, error)
	Reactors(ctx context.Context, r ghcheck.Repo, number int, commentID int64) ([]string, error)
	Reread(ctx context.Context, r ghcheck.Repo, number int, pr bool, id int64) (ghcheck.Listed, bool, error)
	ListReviews(ctx context.Context, r ghcheck.Repo, number int) ([]ghcheck.Review, error)
}

var _ GitHub = (*ghcheck.Client)(nil)

// releaseLister is a GitHub that lists releases (*ghcheck.Client): Find
// groups releases only through one.
type releaseLister interface {
	ListReleases(ctx context.Context, r ghcheck.Repo) ([]ghcheck.Listed, error)
}

var _ releaseLister = (*ghcheck.Client)(nil)

// Options say what Find looks at.
type Options struct {
	Repo ghcheck.Repo
	// Since: only issues, pull requests and comments updated at or after
	// it (zero: all). What people did to an artifact that may group is
	// read whole, whatever Since says.
	Since time.Time
	// Recorded, if set, returns the key a ledger recorded for an artifact
	// (an issue's or pull request's number, a comment's id), or "": two
	// artifacts recorded under different keys are never grouped. It only
	// keeps apart: a key groups only the artifacts that carry it.
	Recorded func(kind string, number int, id int64) string
	// Authors, if set, keeps only groups whose artifacts these logins wrote
	// (compared without case).
	Authors []string
	// Kinds, if set, is the kinds to look at (default AllKinds; branch
	// groups none).
	Kinds []string
	// Progress, if set, is told what is being read, for a terminal.
	Progress func(what string, n int)
}

// Artifact is one member of a group.
type Artifact struct {
	Number int    `json:"number,omitempty"` // issue or pull request
	ID     int64  `json:"id,omitempty"`     // comment or review
	Name   string `json:"name,omitempty"`   // branch
	URL    string `json:"url,omitempty"`
	Author string `json:"author,omitempty"`
	// Thread is a comment's issue or pull request number, a review's pull
	// request.
	Thread  int       `json:"thread,omitempty"`
	SHA     string    `json:"sha,omitempty"` // a branch's or PR head's commit
	Created time.Time `json:"created_at,omitzero"`
	Key     string    `json:"key,omitempty"` // the ghonce key it carries
	Open    bool      `json:"open"`
	// Ours: written by the token's identity (or a trusted login).
	Ours bool `json:"ours"`
	// Human says what a person did to it; empty when nothing.
	Human string `json:"human,omitempty"`
	// After is the time from the kept artifact's creation to this one's,
	// in seconds (duplicates only).
	AfterSeconds *float64 `json:"after_seconds,omitempty"`
	// AckedBy is the person who added AckLabel to it (its thread for a
	// comment): it is left alone and no longer counted open.
	AckedBy string `json:"acknowledged_by,omitempty"`
	// Differs says how a duplicate is not the kept one byte for byte
	// (after NormalizeBody): --apply leaves it for a person. Empty when
	// it is the same.
	Differs string `json:"differs,omitempty"`
	// Listed is the artifact as its listing showed it, and Others the
	// events on its timeline by anyone but us: what Recheck compares it
	// with before a write.
	Listed ghcheck.Listed `json:"-"`
	Others int            `json:"-"`
}

// HumanTouched reports whether a person acted on a.
func (a Artifact) HumanTouched() bool { return a.Human != "" }

// Ref names a for a person: #12, comment 2200000001 on #3, review
// 2200000002 on #4, branch x.
func (a Artifact) Ref(kind string) string {
	switch kind {
	case KindComment, KindReview:
		return fmt.Sprintf("%s %d on #%d", kind, a.ID, a.Thread)
	case KindReviewComment:
		return fmt.Sprintf("inline comment %d on #%d", a.ID, a.Thread)
	case KindBranch:
		return "branch " + a.Name
	case KindRelease:
		return fmt.Sprintf("release %s (id %d)", a.Name, a.ID)
	}
	return "#" + strconv.Itoa(a.Number)
}

// Group is a set of duplicates and the one kept.
type Group struct {
	Kind     string `json:"kind"`
	Evidence string `json:"evidence"`
	// Detail says what the artifacts share, in words.
	Detail     string     `json:"detail"`
	Rule       string     `json:"keep_rule"`
	Keep       Artifact   `json:"keep"`
	Duplicates []Artifact `json:"duplicates"`
	// SpanSeconds is the time from the first to the last of the group.
	SpanSeconds float64 `json:"span_seconds"`
	// KeepListed is the kept artifact as its listing showed it (its title,
	// body, labels, base and head): what adopting its key records.
	KeepListed ghcheck.Listed `json:"-"`
}

// OpenDuplicates counts g's duplicates still open and not acknowledged.
func (g Group) OpenDuplicates() int {
	n := 0
	for _, d := range g.Duplicates {
		if d.Open && d.AckedBy == "" {
			n++
		}
	}
	return n
}

// LookAlike is a set of artifacts that look alike without being proven
// duplicates (the same normalised title, other text or another author).
// It is listed for a person and never acted on.
type LookAlike struct {
	Kind    string `json:"kind"`
	Title   string `json:"title"`
	Numbers []int  `json:"numbers"`
}

// Listed counts what Find read.
type Listed struct {
	Issues   int `json:"issues"`
	PRs      int `json:"prs"`
	Comments int `json:"comments"`
	Reviews  int `json:"reviews,omitempty"`
	// ReviewComments are the inline comments listed.
	ReviewComments int `json:"review_comments"`
	Releases       int `json:"releases,omitempty"`
}

// Report is what Find found.
type Report struct {
	Repo           string      `json:"repo"`
	Since          time.Time   `json:"since,omitzero"`
	Login          string      `json:"login,omitempty"`
	Groups         []Group     `json:"groups"`
	LookAlikes     []LookAlike `json:"look_alikes,omitempty"`
	OpenDuplicates int         `json:"open_duplicates"`
	Listed         Listed      `json:"listed"`
}

// item is an artifact while Find works on it.
type item struct {
	kind string
	l    ghcheck.Listed
	key  string
	// keys are every key something records for it: its marker, its key
	// labels, the ledger's entry.
	keys []string
	ours bool
	// human is what a person did to it; "" for nothing.
	human string
	// ackedBy is the person who added AckLabel.
	ackedBy string
	// others counts the timeline events by anyone but us when it was
	// grouped: Recheck's baseline.
	others int
}

func (it *item) created() time.Time { return it.l.Created }

// order sorts oldest first: by creation, then number, id or name.
func (it *item) order(o *item) int {
	return cmp.Or(it.l.Created.Compare(o.l.Created), cmp.Compare(it.l.Number, o.l.Number), cmp.Compare(it.l.ID, o.l.ID))
}

// recordedApart reports whether something records a and b under
// different keys: each has a key and they share none.
func recordedApart(a, b *item) bool {
	if len(a.keys) == 0 || len(b.keys) == 0 {
		return false
	}
	for _, k := range a.keys {
		if slices.Contains(b.keys, k) {
			return false
		}
	}
	return true
}

func (it *item) artifact() Artifact {
	a := Artifact{URL: it.l.URL, Author: it.l.Author, Created: it.l.Created, Key: it.key, Ours: it.ours, Human: it.human, AckedBy: it.ackedBy, Listed: it.l, Others: it.others}
	switch it.kind {
	case KindIssue, KindPR:
		a.Number, a.Open = it.l.Number, it.l.State == "open"
		if it.kind == KindPR {
			a.SHA = it.l.HeadSHA
		}
	case KindComment, KindReview, KindReviewComment:
		a.ID, a.Thread, a.Open = it.l.ID, it.l.Number, true
	case KindRelease:
		a.ID, a.Name, a.Open = it.l.ID, it.l.Head, true
	}
	return a
}

// finder holds one Find's state.
type finder struct {
	gh    GitHub
	opts  Options
	login string
	kinds map[string]bool
	ours  map[string]bool // login (lower case) -> ours, memoised
	prs   []*item
	trees map[string]ghcheck.Commit
	inGrp map[*item]bool
	// threads memoises what a thread's timeline says of AckLabel.
	threads map[int]string
}

// Find reads the repository and groups its duplicates, strongest
// evidence first. It only reads.
func Find(ctx context.Context, gh GitHub, opts Options) (*Report, error) {
	f := &finder{gh: gh, opts: opts, ours: map[string]bool{}, trees: map[string]ghcheck.Commit{}, inGrp: map[*item]bool{}, threads: map[int]string{}}
	f.kinds = map[string]bool{}
	kinds := opts.Kinds
	if len(kinds) == 0 {
		kinds = defaultKinds
	}
	for _, k := range kinds {
		f.kinds[k] = true
	}
	login, err := gh.Login(ctx)
	if err != nil {
		return nil, err
	}
	f.login = login
	rep := &Report{Repo: opts.Repo.String(), Since: opts.Since, Login: login, Groups: []Group{}}

	progress := func(what string) ghcheck.OnPage {
		if opts.Progress == nil {
			return nil
		}
		return func(n int) { opts.Progress(what, n) }
	}
	// Branches are never grouped: a branch is ours only if ghonce made
	// it, and every branch ghonce makes is its own key's.
	issues, err := gh.ListIssuesSince(ctx, opts.Repo, opts.Since, progress("issues and pull requests"))
	if err != nil {
		return nil, err
	}
	comments, err := gh.ListCommentsSince(ctx, opts.Repo, opts.Since, progress("comments"))
	if err != nil {
		return nil, err
	}
	var pulls []ghcheck.Listed
	if f.kinds[KindPR] || f.kinds[KindReview] {
		if pulls, err = gh.ListPullsSince(ctx, opts.Repo, opts.Since, progress("pull requests")); err != nil {
			return nil, err
		}
	}
	var all []*item
	for _, l := range issues {
		if l.IsPR {
			continue
		}
		it, err := f.newItem(ctx, KindIssue, l)
		if err != nil {
			return nil, err
		}
		all = append(all, it)
		rep.Listed.Issues++
	}
	// The issues listing carries a PR's reactions and comment count; the
	// pulls listing its head and base.
	reactions := map[int]int{}
	for _, l := range issues {
		if l.IsPR {
			reactions[l.Number] = l.Reactions
		}
	}
	for _, l := range pulls {
		l.Reactions = reactions[l.Number]
		it, err := f.newItem(ctx, KindPR, l)
		if err != nil {
			return nil, err
		}
		f.prs = append(f.prs, it)
		all = append(all, it)
		rep.Listed.PRs++
	}
	for _, l := range comments {
		it, err := f.newItem(ctx, KindComment, l)
		if err != nil {
			return nil, err
		}
		all = append(all, it)
		rep.Listed.Comments++
	}
	if f.kinds[KindReview] {
		reviews, err := f.reviews(ctx, pulls)
		if err != nil {
			return nil, err
		}
		all = append(all, reviews...)
		rep.Listed.Reviews = len(reviews)
	}
	if f.kinds[KindReviewComment] {
		inline, err := gh.ListReviewCommentsSince(ctx, opts.Repo, opts.Since, progress("inline comments"))
		if err != nil {
			return nil, err
		}
		for _, l := range inline {
			it, err := f.newItem(ctx, KindReviewComment, l)
			if err != nil {
				return nil, err
			}
			all = append(all, it)
			rep.Listed.ReviewComments++
		}
	}
	if rl, ok := gh.(releaseLister); ok && f.kinds[KindRelease] {
		releases, err := rl.ListReleases(ctx, opts.Repo)
		if err != nil {
			return nil, err
		}
		for _, l := range releases {
			it, err := f.newItem(ctx, KindRelease, l)
			if err != nil {
				return nil, err
			}
			all = append(all, it)
			rep.Listed.Releases++
		}
	}

	// Candidates: sets of our artifacts that the evidence puts together,
	// strongest first; each becomes a group once what people did to its
	// members is read.
	var sets []candidate
	sets = append(sets, f.keySets(all)...)
	sets = append(sets, f.issueSets(all)...)
	prSets, err := f.prSets(ctx)
	if err != nil {
		return nil, err
	}
	sets = append(sets, prSets...)
	sets = append(sets, f.commentSets(all)...)
	sets = append(sets, f.reviewSets(all)...)
	sets = append(sets, f.releaseSets(all)...)
	sets = append(sets, f.reviewCommentSets(all)...)
	var groups []Group
	for _, c := range sets {
		if !f.kinds[c.kind] {
			continue
		}
		g, err := f.group(ctx, c)
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	for _, g := range groups {
		if !f.kinds[g.Kind] || !f.byAuthors(g) {
			continue
		}
		rep.Groups = append(rep.Groups, g)
		rep.OpenDuplicates += g.OpenDuplicates()
	}
	if f.kinds[KindLabels] {
		gs, err := f.labelGroups(ctx, issues)
		if err != nil {
			return nil, err
		}
		for _, g := range gs {
			if f.byAuthors(g) {
				rep.Groups = append(rep.Groups, g)
			}
		}
	}
	if f.kinds[KindIssue] || f.kinds[KindPR] {
		rep.LookAlikes = f.lookAlikes(all)
	}
	return rep, nil
}

// labelGroups reads the timeline of each listed issue and pull request
// and groups, per label, the labeled events by our identity when there are
// two or more: the first is kept, each later one is a duplicate that is
// not open and Differs, so nothing acts on it.
func (f *finder) labelGroups(ctx context.Context, listed []ghcheck.Listed) ([]Group, error) {
	var out []Group
	for _, l := range listed {
		evs, err := f.gh.Timeline(ctx, f.opts.Repo, l.Number)
		if err != nil {
			return nil, err
		}
		order, byLabel := []string{}, map[string][]ghcheck.Event{}
		for _, ev := range evs {
			if ev.Kind != "labeled" {
				continue
			}
			if ours, err := f.isOurs(ctx, ev.Actor); err != nil {
				return nil, err
			} else if !ours {
				continue
			}
			k := strings.ToLower(ev.Label)
			if byLabel[k] == nil {
				order = append(order, k)
			}
			byLabel[k] = append(byLabel[k], ev)
		}
		for _, k := range order {
			evs := byLabel[k]
			if len(evs) < 2 {
				continue
			}
			at := func(ev ghcheck.Event) Artifact {
				return Artifact{Number: l.Number, URL: l.URL, Author: ev.Actor, Created: ev.Created, Ours: true}
			}
			g := Group{Kind: KindLabels, Evidence: EvidenceExact, Detail: fmt.Sprintf("label %q applied by us %d times", evs[0].Label, len(evs)),
				Rule: "the first add", Keep: at(evs[0]), Duplicates: []Artifact{}, KeepListed: l}
			for _, ev := range evs[1:] {
				d := at(ev)
				d.Differs = "an add already made: its workflows ran again; nothing to remove"
				s := ev.Created.Sub(evs[0].Created).Seconds()
				d.AfterSeconds = &s
				g.Duplicates = append(g.Duplicates, d)
			}
			g.SpanSeconds = evs[len(evs)-1].Created.Sub(evs[0].Created).Seconds()
			out = append(out, g)
		}
	}
	return out, nil
}

func (f *finder) isOurs(ctx context.Context, login string) (bool, error) {
	k := strings.ToLower(login)
	if v, ok := f.ours[k]; ok {
		return v, nil
	}
	v, err := f.gh.Ours(ctx, login)
	if err != nil {
		return false, err
	}
	f.ours[k] = v
	return v, nil
}

func (f *finder) newItem(ctx context.Context, kind string, l ghcheck.Listed) (*item, error) {
	ours, err := f.isOurs(ctx, l.Author)
	if err != nil {
		return nil, err
	}
	it := &item{kind: kind, l: l, ours: ours}
	if !ours {
		return it, nil // a key on someone else's artifact proves nothing
	}
	// Only a key the artifact carries on GitHub groups it: a ledger
	// entry names an artifact without proof (anyone who can write the
	// ledger can name any), so its key only keeps it apart.
	it.keys = Carried(l)
	if len(it.keys) > 0 {
		it.key = it.keys[0]
	}
	if f.opts.Recorded != nil {
		var k string
		if kind == KindComment || kind == KindReview || kind == KindReviewComment {
			k = f.opts.Recorded(kind, 0, l.ID)
		} else {
			k = f.opts.Recorded(kind, l.Number, 0)
		}
		if k != "" && !slices.Contains(it.keys, k) {
			it.keys = append(it.keys, k)
		}
	}
	return it, nil
}

// Carried lists the keys l carries on GitHub: its marker's, then its
// ghonce: labels'. Whether the artifact is ours is the caller's to know.
func Carried(l ghcheck.Listed) []string {
	var keys []string
	if k, ok := taskkey.ParseMarker(l.Body); ok {
		keys = append(keys, k)
	}
	for _, name := range l.Labels {
		if k, ok := strings.CutPrefix(name, "ghonce:"); ok && taskkey.Valid(k) && !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// person reports whether login is a person's: not ours, not a bot. It
// knows the logins Find has asked about; any other is asked.
func (f *finder) person(ctx context.Context, login string) (bool, error) {
	if login == "" || strings.HasSuffix(login, "[bot]") {
		return false, nil
	}
	ours, err := f.isOurs(ctx, login)
	return !ours, err
}

// involvement reads what people did to it, whatever its age: on an issue
// or a pull request, its timeline (comments, reviews, labels added,
// references from a person's issue or from any pull request) and, when
// the listing counts any, who reacted; on a comment, who reacted. It sets
// it.human ("" when no person acted) and it.ackedBy.
func (f *finder) involvement(ctx context.Context, it *item) error {
	var why []string
	count := map[string]map[string]bool{} // what -> people
	add := func(what, who string) {
		if count[what] == nil {
			count[what] = map[string]bool{}
			why = append(why, what)
		}
		count[what][who] = true
	}
	if it.kind == KindIssue || it.kind == KindPR {
		evs, err := f.gh.Timeline(ctx, f.opts.Repo, it.l.Number)
		if err != nil {
			return err
		}
		var linked []int
		it.others = 0
		for _, ev := range evs {
			ours, err := f.isOurs(ctx, ev.Actor)
			if err != nil {
				return err
			}
			if !ours {
				it.others++
			}
			p, err := f.person(ctx, ev.Actor)
			if err != nil {
				return err
			}
			switch {
			case ev.Kind == "cross-referenced" && ev.SourcePR && it.kind == KindIssue:
				linked = append(linked, ev.Source)
			case ev.Kind == "head_ref_force_pushed" && !ours: // anyone's but ours, a bot's too
				add("force-pushes", orNoAccount(ev.Actor))
			case !p:
			case ev.Kind == "commented":
				add("comments", ev.Actor)
			case ev.Kind == "reviewed":
				add("reviews", ev.Actor)
			case ev.Kind == "labeled" && ev.Label == AckLabel:
				it.ackedBy = ev.Actor
			case ev.Kind == "labeled":
				add("labels", ev.Actor)
			case ev.Kind == "cross-referenced":
				add("references from #"+strconv.Itoa(ev.Source), ev.Actor)
			}
		}
		if len(linked) > 0 {
			why = append(why, "linked from "+joinNumbers(linked))
		}
		if it.kind == KindPR {
			if all, err := f.commits(ctx, it, add); err != nil {
				return err
			} else if !all {
				why = append(why, fmt.Sprintf("%d commits or more, more than GitHub lists", prCommitsListed))
			}
		}
		if it.l.Merged {
			why = append(why, "merged")
		}
	}
	if it.kind == KindReviewComment && it.l.Reactions > 0 {
		// Reactors reads an issue comment's; who reacted here is not read,
		// and the reactions count as a person's.
		add(fmt.Sprintf("%d reactions", it.l.Reactions), "someone")
	} else if it.l.Reactions > 0 {
		var id int64
		if it.kind == KindComment {
			id = it.l.ID
		}
		who, err := f.gh.Reactors(ctx, f.opts.Repo, it.l.Number, id)
		if err != nil {
			return err
		}
		for _, login := range who {
			if p, err := f.person(ctx, login); err != nil {
				return err
			} else if p {
				add("reactions", login)
			}
		}
	}
	var out []string
	for _, w := range why {
		if people, ok := count[w]; ok {
			w += " by " + strings.Join(slices.Sorted(mapsKeys(people)), ", ")
		}
		out = append(out, w)
	}
	it.human = strings.Join(out, "; ")
	if it.kind == KindComment || it.kind == KindReview || it.kind == KindReviewComment {
		by, err := f.threadAck(ctx, it.l.Number)
		if err != nil {
			return err
		}
		it.ackedBy = by
	}
	return nil
}

// prCommitsListed is the most commits GitHub lists of a pull request.
const prCommitsListed = 250

// commits tells add of the commits on pull request it that anyone but us
// wrote or committed (a bot's, or an e-mail GitHub links to no account,
// too): work a person may still need. GitHub's web-flow committer is
// GitHub applying a person's edit; the author says whose. all is false
// when GitHub may list only some of them: the rest count as a person's.
func (f *finder) commits(ctx context.Context, it *item, add func(what, who string)) (all bool, err error) {
	cs, err := f.gh.PullCommits(ctx, f.opts.Repo, it.l.Number)
	if err != nil {
		return false, err
	}
	for _, c := range cs {
		for _, who := range []string{c.Author, c.Committer} {
			if who == "web-flow" && who == c.Committer {
				continue
			}
			if ours, err := f.isOurs(ctx, who); err != nil {
				return false, err
			} else if !ours {
				add("commits", orNoAccount(who))
			}
		}
	}
	return len(cs) < prCommitsListed, nil
}

func orNoAccount(login string) string {
	if login == "" {
		return "(an e-mail with no account)"
	}
	return login
}

// threadAck is the person who added AckLabel to thread n, or "".
func (f *finder) threadAck(ctx context.Context, n int) (string, error) {
	if by, ok := f.threads[n]; ok {
		return by, nil
	}
	evs, err := f.gh.Timeline(ctx, f.opts.Repo, n)
	if err != nil {
		return "", err
	}
	by := ""
	for _, ev := range evs {
		if ev.Kind == "labeled" && ev.Label == AckLabel {
			if p, err := f.person(ctx, ev.Actor); err != nil {
				return "", err
			} else if p {
				by = ev.Actor
			}
		}
	}
	f.threads[n] = by
	return by, nil
}

func mapsKeys(m map[string]bool) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func joinNumbers(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, "#"+strconv.Itoa(n))
	}
	return strings.Join(s, ", ")
}

// byAuthors reports whether g passes --author.
func (f *finder) byAuthors(g Group) bool {
	if len(f.opts.Authors) == 0 {
		return true
	}
	for _, a := range append([]Artifact{g.Keep}, g.Duplicates...) {
		for _, want := range f.opts.Authors {
			if strings.EqualFold(a.Author, want) {
				return true
			}
		}
	}
	return false
}

// candidate is a set of our artifacts the evidence puts together.
type candidate struct {
	kind, evidence, detail string
	members                []*item
}

// group reads what people did to c's members and builds its Group,
// choosing the kept one by KeepRule.
func (f *finder) group(ctx context.Context, c candidate) (g Group, err error) {
	kind, evidence, detail, members := c.kind, c.evidence, c.detail, c.members
	for _, m := range members {
		if err := f.involvement(ctx, m); err != nil {
			return Group{}, err
		}
	}
	slices.SortFunc(members, (*item).order)
	keep := members[0]
	if keep.human == "" {
		for _, m := range members[1:] {
			if m.human != "" {
				keep = m
				break
			}
		}
	}
	g = Group{Kind: kind, Evidence: evidence, Detail: detail, Rule: KeepRule, Keep: keep.artifact(), Duplicates: []Artifact{}, KeepListed: keep.l}
	for _, m := range members {
		if m == keep {
			continue
		}
		a := m.artifact()
		if a.Differs, err = f.differs(ctx, keep, m); err != nil {
			return Group{}, err
		}
		if !keep.created().IsZero() && !m.created().IsZero() {
			s := m.created().Sub(keep.created()).Seconds()
			a.AfterSeconds = &s
		}
		g.Duplicates = append(g.Duplicates, a)
	}
	if first, last := members[0].created(), members[len(members)-1].created(); !first.IsZero() {
		g.SpanSeconds = last.Sub(first).Seconds()
	}
	return g, nil
}

// differs says how m is not keep byte for byte, "" when it is: a
// comment's or an issue's text (NormalizeBody, an issue's title by
// NormalizeTitle), a pull request's change (its head's commit or tree).
// A key groups what one step made, whatever its text; only a duplicate
// that holds nothing the kept one lacks is removed.
func (f *finder) differs(ctx context.Context, keep, m *item) (string, error) {
	if m.kind != KindPR {
		if SameText(m.kind, keep.l, m.l) {
			return "", nil
		}
		return "its text differs from the kept one's", nil
	}
	const other = "its change differs from the kept one's (another tree)"
	a, b := keep.l.HeadSHA, m.l.HeadSHA
	switch {
	case a == "" || b == "":
		return other, nil
	case a == b:
		return "", nil
	}
	ta, err := f.treeOf(ctx, a)
	if err != nil {
		return "", err
	}
	tb, err := f.treeOf(ctx, b)
	if err != nil {
		return "", err
	}
	if ta != "" && ta == tb {
		return "", nil
	}
	return other, nil
}

// SameText reports whether a and b, two issues or two comments, hold the
// same text: the same thread for comments, the same NormalizeTitle for
// issues, the same NormalizeBody.
func SameText(kind string, a, b ghcheck.Listed) bool {
	if (kind == KindComment || kind == KindReview || kind == KindReviewComment) && (a.Number != b.Number || a.State != b.State) ||
		kind == KindReviewComment && a.Position != b.Position || kind == KindIssue && NormalizeTitle(a.Title) != NormalizeTitle(b.Title) ||
		kind == KindRelease && (a.Head != b.Head || NormalizeTitle(a.Title) != NormalizeTitle(b.Title)) {
		return false
	}
	return NormalizeBody(a.Body) == NormalizeBody(b.Body)
}

// set marks members grouped and makes their candidate.
func (f *finder) set(kind, evidence, detail string, members []*item) candidate {
	for _, m := range members {
		f.inGrp[m] = true
	}
	return candidate{kind: kind, evidence: evidence, detail: detail, members: members}
}

// apart reports whether something records two of ms under different
// keys: then they are two effects, and the set is left alone.
func apart(ms []*item) bool {
	for i, a := range ms {
		for _, b := range ms[i+1:] {
			if recordedApart(a, b) {
				return true
			}
		}
	}
	return false
}

// buckets groups items by key, keys in the order first seen, leaving out
// the items whose key is not ok.
func buckets[K comparable](items []*item, key func(*item) (K, bool)) ([]K, map[K][]*item) {
	by := map[K][]*item{}
	var order []K
	for _, it := range items {
		k, ok := key(it)
		if !ok {
			continue
		}
		if _, seen := by[k]; !seen {
			order = append(order, k)
		}
		by[k] = append(by[k], it)
	}
	return order, by
}

// keySets: more than one of our artifacts carrying the same key (in
// their marker or label), comments on one thread: a group never spans
// threads.
func (f *finder) keySets(all []*item) []candidate {
	type kk struct {
		kind, key string
		thread    int
	}
	order, byKey := buckets(all, func(it *item) (kk, bool) {
		k := kk{kind: it.kind, key: it.key}
		if it.kind == KindComment || it.kind == KindReview || it.kind == KindReviewComment {
			k.thread = it.l.Number
		}
		return k, it.ours && it.key != ""
	})
	var out []candidate
	for _, k := range order {
		if ms := byKey[k]; len(ms) > 1 {
			out = append(out, f.set(k.kind, EvidenceKey, "the same ghonce key "+k.key+" (marker or label)", ms))
		}
	}
	return out
}

// issueSets: the same author, the same normalised title and body. An
// issue closed as completed is left out: one like it filed later is a
// recurrence, not a duplicate.
func (f *finder) issueSets(all []*item) []candidate {
	return f.exact(all, KindIssue, "the same author, the same normalised title and body", func(it *item) string {
		if it.l.StateReason == "completed" {
			return ""
		}
		return strings.ToLower(it.l.Author) + "\x00" + NormalizeTitle(it.l.Title) + "\x00" + NormalizeBody(it.l.Body)
	})
}

// commentSets: the same author, the same normalised body, on the same
// thread.
func (f *finder) commentSets(all []*item) []candidate {
	return f.exact(all, KindComment, "the same author, the same normalised body, on the same thread", func(it *item) string {
		return strings.ToLower(it.l.Author) + "\x00" + strconv.Itoa(it.l.Number) + "\x00" + NormalizeBody(it.l.Body)
	})
}

// reviewCommentSets: the same author, the same normalised body, on the
// same line of the same pull request (or in the same thread): what
// claude-code-action #1405 left, every inline comment twice.
func (f *finder) reviewCommentSets(all []*item) []candidate {
	return f.exact(all, KindReviewComment, "the same author, the same normalised body, on the same line of the same pull request", func(it *item) string {
		return strings.ToLower(it.l.Author) + "\x00" + strconv.Itoa(it.l.Number) + "\x00" + it.l.Position + "\x00" + NormalizeBody(it.l.Body)
	})
}

// releaseSets: the same author, tag, title and normalised notes (drafts,
// which GitHub lets share a tag).
func (f *finder) releaseSets(all []*item) []candidate {
	return f.exact(all, KindRelease, "the same author, tag, title and normalised notes", func(it *item) string {
		return strings.ToLower(it.l.Author) + "\x00" + it.l.Head + "\x00" + NormalizeTitle(it.l.Title) + "\x00" + NormalizeBody(it.l.Body)
	})
}

// reviewSets: the same author, the same event, the same normalised body,
// on the same pull request.
func (f *finder) reviewSets(all []*item) []candidate {
	return f.exact(all, KindReview, "the same author, the same event, the same normalised body, on the same pull request", func(it *item) string {
		return strings.ToLower(it.l.Author) + "\x00" + it.l.State + "\x00" + strconv.Itoa(it.l.Number) + "\x00" + NormalizeBody(it.l.Body)
	})
}

// reviews lists the submitted reviews of each pull request listed, one
// listing each (GitHub has no repository-wide one). A pending review is
// its author's draft, one at most: never a duplicate.
func (f *finder) reviews(ctx context.Context, pulls []ghcheck.Listed) ([]*item, error) {
	var out []*item
	for _, pr := range pulls {
		rvs, err := f.gh.ListReviews(ctx, f.opts.Repo, pr.Number)
		if err != nil {
			return nil, err
		}
		for _, rv := range rvs {
			if rv.State == "PENDING" {
				continue
			}
			it, err := f.newItem(ctx, KindReview, ghcheck.Listed{Number: pr.Number, ID: rv.ID, Body: rv.Body, Author: rv.Author, URL: rv.URL,
				State: rv.State, Created: rv.Submitted, Updated: rv.Submitted})
			if err != nil {
				return nil, err
			}
			out = append(out, it)
		}
		if f.opts.Progress != nil {
			f.opts.Progress("reviews", len(out))
		}
	}
	return out, nil
}

// exact groups our artifacts of kind by sig ("" for none), leaving alone
// a set two of whose members are recorded under different keys.
func (f *finder) exact(all []*item, kind, detail string, sig func(*item) string) []candidate {
	order, bySig := buckets(all, func(it *item) (string, bool) {
		if it.kind != kind || !it.ours || f.inGrp[it] {
			return "", false
		}
		s := sig(it)
		return s, s != ""
	})
	var out []candidate
	for _, s := range order {
		if ms := bySig[s]; len(ms) > 1 && !apart(ms) {
			out = append(out, f.set(kind, EvidenceExact, detail, ms))
		}
	}
	return out
}

// prSets: the same author, the same base, heads at the same commit or
// with the same tree. Trees are read only for PRs that share an author
// and base with another, once per commit; a head GitHub cannot return
// (404, 422) has no tree, and groups by its commit alone.
func (f *finder) prSets(ctx context.Context) ([]candidate, error) {
	type ab struct{ author, base string }
	order, byAB := buckets(f.prs, func(it *item) (ab, bool) {
		return ab{strings.ToLower(it.l.Author), it.l.Base}, it.ours && !f.inGrp[it] && it.l.HeadSHA != ""
	})
	var out []candidate
	for _, k := range order {
		ms := byAB[k]
		if len(ms) < 2 {
			continue
		}
		// Union the PRs whose heads share a commit or a tree.
		parent := make([]int, len(ms))
		for i := range parent {
			parent[i] = i
		}
		var root func(int) int
		root = func(i int) int {
			for parent[i] != i {
				i = parent[i]
			}
			return i
		}
		firstBy := map[string]int{}
		join := func(sig string, i int) {
			if sig == "" {
				return
			}
			if j, ok := firstBy[sig]; ok {
				parent[root(i)] = root(j)
			} else {
				firstBy[sig] = i
			}
		}
		for i, it := range ms {
			join("c:"+it.l.HeadSHA, i)
			tree, err := f.treeOf(ctx, it.l.HeadSHA)
			if err != nil {
				return nil, err
			}
			if tree != "" { // an unknown tree equals nothing
				join("t:"+tree, i)
			}
		}
		sets := map[int][]*item{}
		var roots []int
		for i, it := range ms {
			r := root(i)
			if _, ok := sets[r]; !ok {
				roots = append(roots, r)
			}
			sets[r] = append(sets[r], it)
		}
		for _, r := range roots {
			set := sets[r]
			if len(set) < 2 || apart(set) {
				continue
			}
			detail := "the same author, the same base " + k.base + ", heads at the same commit"
			for _, it := range set[1:] {
				if it.l.HeadSHA != set[0].l.HeadSHA {
					detail = "the same author, the same base " + k.base + ", heads at the same commit or with the same tree"
				}
			}
			out = append(out, f.set(KindPR, EvidenceExact, detail, set))
		}
	}
	return out, nil
}

// treeOf reads the tree of commit sha, once per commit; "" when GitHub no
// longer has the commit (the PR's head then groups by commit alone).
func (f *finder) treeOf(ctx context.Context, sha string) (string, error) {
	if c, ok := f.trees[sha]; ok {
		return c.Tree, nil
	}
	c, err := f.gh.GetCommitInfo(ctx, f.opts.Repo, sha)
	if err != nil {
		return "", err
	}
	f.trees[sha] = c
	return c.Tree, nil
}

// lookAlikes lists issues and PRs that share a normalised title and are
// not in one group: a person may want to look; nothing acts on them.
func (f *finder) lookAlikes(all []*item) []LookAlike {
	type kt struct{ kind, title string }
	by := map[kt][]*item{}
	var order []kt
	for _, it := range all {
		if (it.kind != KindIssue && it.kind != KindPR) || !f.kinds[it.kind] {
			continue
		}
		k := kt{it.kind, NormalizeTitle(it.l.Title)}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], it)
	}
	var out []LookAlike
	for _, k := range order {
		ms := by[k]
		outside := 0
		for _, m := range ms {
			if !f.inGrp[m] {
				outside++
			}
		}
		if len(ms) < 2 || outside == 0 {
			continue
		}
		la := LookAlike{Kind: k.kind, Title: ms[0].l.Title}
		for _, m := range ms {
			la.Numbers = append(la.Numbers, m.l.Number)
		}
		slices.Sort(la.Numbers)
		out = append(out, la)
	}
	return out
}

// NormalizeTitle is the title two issues must share: white space at the
// ends removed and inner runs folded to one space. Case and every other
// character count.
func NormalizeTitle(s string) string { return strings.Join(strings.Fields(s), " ") }

// NormalizeBody is the body two artifacts must share: a leading ghonce
// marker line removed (each naive attempt may have stamped its own key),
// line endings as \n, trailing white space of each line and blank lines at
// the ends removed. Every other byte counts.
func NormalizeBody(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if k, ok := taskkey.ParseMarker(s); ok {
		s = taskkey.WithoutMarker(k, s)
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// Recheck reads duplicate d of g and g's kept artifact again, right
// before a write that closes or deletes d, and says why the write must not
// happen ("" when it may): either is gone, closed or reopened, edited,
// moved to another head, d no longer holds the kept one's text, or d has
// new activity by anyone but us (a comment, a review, a label, a
// reference, a reaction) since Find read it. The caller waits for the
// write pacer before it, never after: the write is then the only request
// between this read and the change; what happens in between is the risk
// left.
func Recheck(ctx context.Context, gh GitHub, r ghcheck.Repo, g Group, d Artifact) (string, error) {
	isPR := g.Kind == KindPR
	now, found, err := gh.Reread(ctx, r, d.Number, isPR, d.ID)
	if err != nil {
		return "", err
	}
	if why := changed(g.Kind, d, now, found); why != "" {
		return d.Ref(g.Kind) + " " + why, nil
	}
	reactions := now.Reactions
	if isPR { // a pull request's own read carries no reactions
		who, err := gh.Reactors(ctx, r, d.Number, 0)
		if err != nil {
			return "", err
		}
		reactions = len(who)
	}
	if reactions != d.Listed.Reactions {
		return d.Ref(g.Kind) + " has new reactions since the listing", nil
	}
	if g.Kind == KindIssue || isPR {
		evs, err := gh.Timeline(ctx, r, d.Number)
		if err != nil {
			return "", err
		}
		others, who := 0, map[string]bool{}
		for _, ev := range evs {
			ours, err := gh.Ours(ctx, ev.Actor)
			if err != nil {
				return "", err
			}
			if !ours {
				others++
				who[ev.Actor] = true
			}
		}
		if others > d.Others {
			return fmt.Sprintf("%s has new activity since the listing (%s)", d.Ref(g.Kind), strings.Join(slices.Sorted(mapsKeys(who)), ", ")), nil
		}
	}
	k := g.Keep
	kept, found, err := gh.Reread(ctx, r, k.Number, isPR, k.ID)
	if err != nil {
		return "", err
	}
	if why := changed(g.Kind, k, kept, found); why != "" {
		return "the kept " + k.Ref(g.Kind) + " " + why, nil
	}
	if !isPR && !SameText(g.Kind, kept, now) {
		return d.Ref(g.Kind) + " does not hold the kept one's text", nil
	}
	return "", nil
}

// changed says how now differs from what a was when it was grouped, ""
// when it does not.
func changed(kind string, a Artifact, now ghcheck.Listed, found bool) string {
	was := a.Listed
	switch {
	case !found:
		return "is gone since the listing"
	case now.State != was.State:
		return "is " + now.State + " since the listing"
	case now.Title != was.Title || now.Body != was.Body || (kind == KindComment && !now.Updated.Equal(was.Updated)):
		return "was edited since the listing"
	case kind == KindPR && now.HeadSHA != was.HeadSHA:
		return "has another head commit since the listing"
	case !strings.EqualFold(now.Author, was.Author):
		return "has another author"
	}
	return ""
}
