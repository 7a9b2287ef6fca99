// Package audit finds the duplicates that runs without ghonce left on a
// repository, by evidence only: artifacts that carry the same ghonce key,
// and artifacts that are exactly alike (the same author, byte-identical
// normalised text, the same thread or base, the same commit or tree). It
// never groups by similarity: other text or another author is never a
// duplicate, however close.
//
// Find only reads, through consistent paginated listings (never search):
// the repository's issues, pull requests and comments since a time, each
// in one listing, and its branches. Plan turns a Report into the writes
// that settle it; the CLI performs them through the engine.
package audit

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
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
	KindBranch  = "branch"
)

// AllKinds lists the kinds in the order groups are reported.
var AllKinds = []string{KindIssue, KindPR, KindComment, KindBranch}

// Evidence, strongest first.
const (
	EvidenceKey   = "key"
	EvidenceExact = "exact"
)

// KeepRule is how the kept artifact of a group is chosen.
const KeepRule = "the oldest, unless it has no human activity and a newer one has (comments or reviews by another person, reactions, a linked pull request, a merge): then the oldest of those"

// GitHub is what Find reads. *ghcheck.Client implements it.
type GitHub interface {
	Login(ctx context.Context) (string, error)
	Ours(ctx context.Context, login string) (bool, error)
	ListIssuesSince(ctx context.Context, r ghcheck.Repo, since time.Time, onPage ghcheck.OnPage) ([]ghcheck.Listed, error)
	ListPullsSince(ctx context.Context, r ghcheck.Repo, since time.Time, onPage ghcheck.OnPage) ([]ghcheck.Listed, error)
	ListCommentsSince(ctx context.Context, r ghcheck.Repo, since time.Time, onPage ghcheck.OnPage) ([]ghcheck.Listed, error)
	ListBranches(ctx context.Context, r ghcheck.Repo, onPage ghcheck.OnPage) ([]ghcheck.Branch, error)
	DefaultBranch(ctx context.Context, r ghcheck.Repo) (string, error)
	GetCommitInfo(ctx context.Context, r ghcheck.Repo, sha string) (ghcheck.Commit, error)
	ListReviews(ctx context.Context, r ghcheck.Repo, number int) ([]ghcheck.Review, error)
	PullsForHead(ctx context.Context, r ghcheck.Repo, branch string) ([]int, error)
}

var _ GitHub = (*ghcheck.Client)(nil)

// Options say what Find looks at.
type Options struct {
	Repo ghcheck.Repo
	// Since: only issues, pull requests and comments updated at or after
	// it (zero: all). Branches have no time and are always listed.
	Since time.Time
	// Authors, if set, keeps only groups whose artifacts these logins wrote
	// (compared without case).
	Authors []string
	// Kinds, if set, is the kinds to look at (default AllKinds).
	Kinds []string
	// Progress, if set, is told what is being read, for a terminal.
	Progress func(what string, n int)
}

// Artifact is one member of a group.
type Artifact struct {
	Number int    `json:"number,omitempty"` // issue or pull request
	ID     int64  `json:"id,omitempty"`     // comment
	Name   string `json:"name,omitempty"`   // branch
	URL    string `json:"url,omitempty"`
	Author string `json:"author,omitempty"`
	// Thread is a comment's issue or pull request number.
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
}

// HumanTouched reports whether a person acted on a.
func (a Artifact) HumanTouched() bool { return a.Human != "" }

// Ref names a for a person: #12, comment 2200000001 on #3, branch x.
func (a Artifact) Ref(kind string) string {
	switch kind {
	case KindComment:
		return fmt.Sprintf("comment %d on #%d", a.ID, a.Thread)
	case KindBranch:
		return "branch " + a.Name
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

// OpenDuplicates counts g's duplicates still open.
func (g Group) OpenDuplicates() int {
	n := 0
	for _, d := range g.Duplicates {
		if d.Open {
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
	Branches int `json:"branches"`
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
	b    ghcheck.Branch
	key  string
	ours bool
	// human is what a person did to it; "" for nothing.
	human string
	// headTree is a PR head's tree (read only for PRs that may group).
	headTree string
}

func (it *item) created() time.Time { return it.l.Created }

// order sorts oldest first: by creation, then number, id or name.
func (it *item) order(o *item) int {
	return cmp.Or(it.l.Created.Compare(o.l.Created), cmp.Compare(it.l.Number, o.l.Number), cmp.Compare(it.l.ID, o.l.ID), strings.Compare(it.b.Name, o.b.Name))
}

func (it *item) artifact() Artifact {
	a := Artifact{URL: it.l.URL, Author: it.l.Author, Created: it.l.Created, Key: it.key, Ours: it.ours, Human: it.human}
	switch it.kind {
	case KindIssue, KindPR:
		a.Number, a.Open = it.l.Number, it.l.State == "open"
		if it.kind == KindPR {
			a.SHA = it.l.HeadSHA
		}
	case KindComment:
		a.ID, a.Thread, a.Open = it.l.ID, it.l.Number, true
	case KindBranch:
		a.Name, a.SHA, a.Open, a.Author = it.b.Name, it.b.SHA, true, it.l.Author
		a.Created = time.Time{}
	}
	return a
}

// finder holds one Find's state.
type finder struct {
	gh     GitHub
	opts   Options
	login  string
	kinds  map[string]bool
	ours   map[string]bool // login (lower case) -> ours, memoised
	byNum  map[int]*item   // issues and PRs by number
	thread map[int][]*item // comments by thread
	prs    []*item
	trees  map[string]ghcheck.Commit
	inGrp  map[*item]bool
}

// Find reads the repository and groups its duplicates, strongest
// evidence first. It only reads.
func Find(ctx context.Context, gh GitHub, opts Options) (*Report, error) {
	f := &finder{gh: gh, opts: opts, ours: map[string]bool{}, byNum: map[int]*item{}, thread: map[int][]*item{}, trees: map[string]ghcheck.Commit{}, inGrp: map[*item]bool{}}
	f.kinds = map[string]bool{}
	kinds := opts.Kinds
	if len(kinds) == 0 {
		kinds = AllKinds
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
	// Issues and their comments are always read when issues, PRs or
	// comments are audited: comments are the human activity of a thread.
	issues, err := gh.ListIssuesSince(ctx, opts.Repo, opts.Since, progress("issues and pull requests"))
	if err != nil {
		return nil, err
	}
	comments, err := gh.ListCommentsSince(ctx, opts.Repo, opts.Since, progress("comments"))
	if err != nil {
		return nil, err
	}
	var pulls []ghcheck.Listed
	if f.kinds[KindPR] || f.kinds[KindIssue] || f.kinds[KindBranch] {
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
		f.byNum[l.Number] = it
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
		f.byNum[l.Number] = it
		f.prs = append(f.prs, it)
		all = append(all, it)
		rep.Listed.PRs++
	}
	for _, l := range comments {
		it, err := f.newItem(ctx, KindComment, l)
		if err != nil {
			return nil, err
		}
		f.thread[l.Number] = append(f.thread[l.Number], it)
		all = append(all, it)
		rep.Listed.Comments++
	}
	f.markHuman(all)

	var groups []Group
	groups = append(groups, f.keyGroups(all)...)
	groups = append(groups, f.issueGroups(all)...)
	prGroups, err := f.prGroups(ctx)
	if err != nil {
		return nil, err
	}
	groups = append(groups, prGroups...)
	groups = append(groups, f.commentGroups(all)...)
	if f.kinds[KindBranch] {
		bg, n, err := f.branchGroups(ctx, progress("branches"))
		if err != nil {
			return nil, err
		}
		rep.Listed.Branches = n
		groups = append(groups, bg...)
	}
	for _, g := range groups {
		if !f.kinds[g.Kind] || !f.byAuthors(g) {
			continue
		}
		rep.Groups = append(rep.Groups, g)
		rep.OpenDuplicates += g.OpenDuplicates()
	}
	if f.kinds[KindIssue] || f.kinds[KindPR] {
		rep.LookAlikes = f.lookAlikes(all)
	}
	return rep, nil
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
	return &item{kind: kind, l: l, key: keyOf(l), ours: ours}, nil
}

// keyOf is the ghonce key an artifact carries: its body's marker, else a
// ghonce label.
func keyOf(l ghcheck.Listed) string {
	if k, ok := taskkey.ParseMarker(l.Body); ok {
		return k
	}
	for _, name := range l.Labels {
		if k, ok := strings.CutPrefix(name, "ghonce:"); ok && taskkey.Valid(k) {
			return k
		}
	}
	return ""
}

// person reports whether login's activity on an artifact by author is a
// person's: not the author, not ours, not a bot.
func (f *finder) person(login, author string) bool {
	return login != "" && !strings.EqualFold(login, author) && !f.ours[strings.ToLower(login)] && !strings.HasSuffix(login, "[bot]")
}

var issueRef = regexp.MustCompile(`#([0-9]+)\b`)

// markHuman records what people did to each issue, PR and comment:
// comments on its thread by another person (a ghonce marker's comment is
// ghonce's own), reactions, a pull request that mentions an issue, a
// merge. Reviews are read later, for the PRs that group.
func (f *finder) markHuman(all []*item) {
	linked := map[int][]int{}
	for _, pr := range f.prs {
		for _, m := range issueRef.FindAllStringSubmatch(pr.l.Title+"\n"+pr.l.Body, -1) {
			if n, err := strconv.Atoi(m[1]); err == nil && n != pr.l.Number {
				linked[n] = append(linked[n], pr.l.Number)
			}
		}
	}
	for _, it := range all {
		var why []string
		if it.l.Reactions > 0 {
			why = append(why, plural(it.l.Reactions, "reaction"))
		}
		if it.kind == KindIssue || it.kind == KindPR {
			people := map[string]bool{}
			n := 0
			for _, cm := range f.thread[it.l.Number] {
				if _, marked := taskkey.ParseMarker(cm.l.Body); !marked && f.person(cm.l.Author, it.l.Author) {
					n++
					people[cm.l.Author] = true
				}
			}
			if n > 0 {
				why = append(why, plural(n, "comment")+" by "+strings.Join(slices.Sorted(mapsKeys(people)), ", "))
			}
			if prs := linked[it.l.Number]; it.kind == KindIssue && len(prs) > 0 {
				why = append(why, "linked from "+joinNumbers(prs))
			}
			if it.l.Merged {
				why = append(why, "merged")
			}
		}
		it.human = strings.Join(why, "; ")
	}
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

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
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

// group builds a Group from members (at least two), choosing the kept one
// by KeepRule. Members are marked as grouped.
func (f *finder) group(kind, evidence, detail string, members []*item) Group {
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
	g := Group{Kind: kind, Evidence: evidence, Detail: detail, Rule: KeepRule, Keep: keep.artifact(), Duplicates: []Artifact{}, KeepListed: keep.l}
	for _, m := range members {
		f.inGrp[m] = true
		if m == keep {
			continue
		}
		a := m.artifact()
		if !keep.created().IsZero() && !m.created().IsZero() {
			s := m.created().Sub(keep.created()).Seconds()
			a.AfterSeconds = &s
		}
		g.Duplicates = append(g.Duplicates, a)
	}
	if first, last := members[0].created(), members[len(members)-1].created(); !first.IsZero() {
		g.SpanSeconds = last.Sub(first).Seconds()
	}
	return g
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

// keyGroups: more than one artifact carrying the same key.
func (f *finder) keyGroups(all []*item) []Group {
	order, byKey := buckets(all, func(it *item) (string, bool) {
		return it.kind + "\x00" + it.key, it.key != ""
	})
	var out []Group
	for _, k := range order {
		ms := byKey[k]
		if len(ms) < 2 {
			continue
		}
		kind, key, _ := strings.Cut(k, "\x00")
		out = append(out, f.group(kind, EvidenceKey, "the same ghonce key "+key+" (marker or label)", ms))
	}
	return out
}

// issueGroups: the same author, the same normalised title and body.
func (f *finder) issueGroups(all []*item) []Group {
	return f.exact(all, KindIssue, "the same author, the same normalised title and body", func(it *item) string {
		return strings.ToLower(it.l.Author) + "\x00" + NormalizeTitle(it.l.Title) + "\x00" + NormalizeBody(it.l.Body)
	})
}

// commentGroups: the same author, the same normalised body, on the same
// thread.
func (f *finder) commentGroups(all []*item) []Group {
	return f.exact(all, KindComment, "the same author, the same normalised body, on the same thread", func(it *item) string {
		return strings.ToLower(it.l.Author) + "\x00" + strconv.Itoa(it.l.Number) + "\x00" + NormalizeBody(it.l.Body)
	})
}

func (f *finder) exact(all []*item, kind, detail string, sig func(*item) string) []Group {
	order, bySig := buckets(all, func(it *item) (string, bool) {
		if it.kind != kind || f.inGrp[it] {
			return "", false
		}
		return sig(it), true
	})
	var out []Group
	for _, s := range order {
		if ms := bySig[s]; len(ms) > 1 {
			out = append(out, f.group(kind, EvidenceExact, detail, ms))
		}
	}
	return out
}

// prGroups: the same author, the same base, heads at the same commit or
// with the same tree. Trees are read only for PRs that share an author
// and base with another, once per commit; reviews only for PRs that group.
func (f *finder) prGroups(ctx context.Context) ([]Group, error) {
	type ab struct{ author, base string }
	order, byAB := buckets(f.prs, func(it *item) (ab, bool) {
		return ab{strings.ToLower(it.l.Author), it.l.Base}, !f.inGrp[it] && it.l.HeadSHA != ""
	})
	var out []Group
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
			it.headTree = tree
			join("t:"+tree, i)
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
			if len(set) < 2 {
				continue
			}
			if err := f.markReviews(ctx, set); err != nil {
				return nil, err
			}
			detail := "the same author, the same base " + k.base + ", heads at the same commit"
			for _, it := range set[1:] {
				if it.l.HeadSHA != set[0].l.HeadSHA {
					detail = "the same author, the same base " + k.base + ", heads at the same commit or with the same tree"
				}
			}
			out = append(out, f.group(KindPR, EvidenceExact, detail, set))
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

// markReviews adds a person's reviews to the human activity of PRs.
func (f *finder) markReviews(ctx context.Context, prs []*item) error {
	for _, it := range prs {
		rs, err := f.gh.ListReviews(ctx, f.opts.Repo, it.l.Number)
		if err != nil {
			return err
		}
		n := 0
		for _, rv := range rs {
			if ours, err := f.isOurs(ctx, rv.Author); err != nil {
				return err
			} else if !ours && f.person(rv.Author, it.l.Author) {
				n++
			}
		}
		if n > 0 {
			it.human = strings.TrimPrefix(it.human+"; "+plural(n, "review"), "; ")
		}
	}
	return nil
}

// branchGroups: branches whose head is one commit, written by one author,
// with no pull request (stray branches). The kept one is a branch at that
// commit with a pull request, else the first by name (GitHub keeps no
// creation time for a branch).
func (f *finder) branchGroups(ctx context.Context, onPage ghcheck.OnPage) ([]Group, int, error) {
	def, err := f.gh.DefaultBranch(ctx, f.opts.Repo)
	if err != nil {
		return nil, 0, err
	}
	branches, err := f.gh.ListBranches(ctx, f.opts.Repo, onPage)
	if err != nil {
		return nil, 0, err
	}
	bySHA := map[string][]ghcheck.Branch{}
	var order []string
	for _, b := range branches {
		if b.Name == def {
			continue
		}
		if _, ok := bySHA[b.SHA]; !ok {
			order = append(order, b.SHA)
		}
		bySHA[b.SHA] = append(bySHA[b.SHA], b)
	}
	// A branch a listed PR uses has a PR; the others are asked one by one
	// (a PR older than --since is not in the listing).
	listedHead := map[string]bool{}
	for _, pr := range f.prs {
		if strings.EqualFold(pr.l.HeadOwner, f.opts.Repo.Owner) {
			listedHead[pr.l.Head] = true
		}
	}
	var out []Group
	for _, sha := range order {
		bs := bySHA[sha]
		if len(bs) < 2 {
			continue
		}
		if _, err := f.treeOf(ctx, sha); err != nil {
			return nil, 0, err
		}
		c := f.trees[sha]
		ours, err := f.isOurs(ctx, c.Author)
		if err != nil {
			return nil, 0, err
		}
		var withPR, stray []*item
		for _, b := range bs {
			it := &item{kind: KindBranch, b: b, ours: ours, l: ghcheck.Listed{Author: c.Author, URL: ""}}
			has := listedHead[b.Name]
			if !has {
				prs, err := f.gh.PullsForHead(ctx, f.opts.Repo, b.Name)
				if err != nil {
					return nil, 0, err
				}
				has = len(prs) > 0
			}
			if has {
				withPR = append(withPR, it)
			} else {
				stray = append(stray, it)
			}
		}
		if len(stray) == 0 || len(withPR)+len(stray) < 2 {
			continue
		}
		byName := func(a, b *item) int { return strings.Compare(a.b.Name, b.b.Name) }
		slices.SortFunc(withPR, byName)
		slices.SortFunc(stray, byName)
		keep := append(withPR, stray...)[0]
		g := Group{Kind: KindBranch, Evidence: EvidenceExact, Detail: "the same commit " + short(sha) + " by " + cmp.Or(c.Author, "an unlinked author") + ", no pull request",
			Rule: "a branch at the commit with a pull request, else the first by name (GitHub keeps no creation time for a branch)", Keep: keep.artifact(), Duplicates: []Artifact{}}
		if len(withPR) > 0 {
			g.Keep.Human = "has a pull request"
		}
		for _, it := range stray {
			if it != keep {
				g.Duplicates = append(g.Duplicates, it.artifact())
			}
		}
		out = append(out, g)
	}
	return out, len(branches), nil
}

func short(sha string) string { return sha[:min(len(sha), 12)] }

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
	if _, ok := taskkey.ParseMarker(s); ok {
		_, s, _ = strings.Cut(s, "\n")
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}
