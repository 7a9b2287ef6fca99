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
// Which artifacts it reads, what makes two of them the same act and what
// --apply may do is each kind's declaration (effect.Audit, in its Face):
// the audit names no kind. Find only reads, through consistent paginated
// listings (never search): each kind's since a time, in one listing
// (ghcheck.Lists), then the timeline (and reactions) of each artifact
// that may group. Recheck reads a duplicate and its kept artifact again right
// before a write; the CLI performs the writes through the engine.
package audit

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/kinds"
	_ "github.com/ghonce/ghonce/reconcile" // registers the kinds on GitHub, whose Faces say how each is audited
	"github.com/ghonce/ghonce/taskkey"
)

// AllKinds lists the kinds the audit accepts, every kind whose Face
// declares an Audit, in the order their groups are reported (by Rank).
var AllKinds = auditKinds(false)

// DefaultKinds are the kinds Find looks at when Options.Kinds is empty:
// all but the Optional ones.
var DefaultKinds = auditKinds(true)

func auditKinds(byDefault bool) []string {
	var out []string
	for _, k := range kinds.All() {
		if f, _ := kinds.FaceOf(k); f.Audit != nil && !(byDefault && f.Audit.Optional) {
			out = append(out, k)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(Rule(a).Rank, Rule(b).Rank) })
	return out
}

// GuideKinds names the guide's generated table of the kinds, GuideTable.
const GuideKinds = "audit-kinds"

// GuideTable is docs/guide/audit.md's table of the kinds (make docs): what
// makes two of our artifacts the same act, and what --apply does.
func GuideTable() string {
	b := "| kind | `listed` (`--json`) | `exact`: two of ours share | `--apply` on a duplicate |\n|---|---|---|---|\n"
	for _, k := range AllKinds {
		if a := Rule(k); a.Listing != "" {
			do := map[string]string{"close": "links the kept one, closes it as a duplicate", "close-pr": "links the kept one, closes it", "delete": "deletes it"}[a.Settle]
			b += fmt.Sprintf("| %s | `%s` | %s%s | %s |\n", k, a.Listing, a.Detail, map[bool]string{true: " (only with `--kind " + k + "`)"}[a.Optional], cmp.Or(do, "leaves it: "+a.Leave))
		}
	}
	return b
}

// Rule is kind's audit declaration (its Face's); the zero Audit for a
// kind the audit does not look at.
func Rule(kind string) effect.Audit {
	if f, _ := kinds.FaceOf(kind); f.Audit != nil {
		return *f.Audit
	}
	return effect.Audit{}
}

// Numbered reports whether kind's artifacts are issues or pull requests,
// named by their number (a thread with a timeline); others by their id.
func Numbered(kind string) bool { return strings.Contains(Rule(kind).Ref, "{number}") }

// onThread reports whether kind's artifacts are on an issue's or pull
// request's thread: a key groups them only on one.
func onThread(kind string) bool { return strings.Contains(Rule(kind).Ref, "{thread}") }

// same reports whether kind's artifacts share part (Audit.Same) when
// they are the same act.
func same(kind, part string) bool { return slices.Contains(Rule(kind).Same, part) }

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
	Lists(r ghcheck.Repo, since time.Time, progress func(what string, n int)) *ghcheck.Lists
	GetCommitInfo(ctx context.Context, r ghcheck.Repo, sha string) (ghcheck.Commit, error)
	PullCommits(ctx context.Context, r ghcheck.Repo, number int) ([]ghcheck.Commit, error)
	Timeline(ctx context.Context, r ghcheck.Repo, number int) ([]ghcheck.Event, error)
	Reactors(ctx context.Context, r ghcheck.Repo, number int, commentID int64) ([]string, error)
	Reread(ctx context.Context, r ghcheck.Repo, number int, pr bool, id int64) (ghcheck.Listed, bool, error)
}

var _ GitHub = (*ghcheck.Client)(nil)

// Options say what Find looks at.
type Options struct {
	Repo ghcheck.Repo
	// Since: only issues, pull requests and comments updated at or after
	// it (zero: all). What people did to an artifact that may group is
	// read whole, whatever Since says.
	Since time.Time
	// Recorded, if set, returns the key a ledger recorded for an artifact
	// (by its number or its id, as its kind names it: Numbered), or "": two
	// artifacts recorded under different keys are never grouped. It only
	// keeps apart: a key groups only the artifacts that carry it.
	Recorded func(kind string, number int, id int64) string
	// Authors, if set, keeps only groups whose artifacts these logins wrote
	// (compared without case).
	Authors []string
	// Kinds, if set, is the kinds to look at (default DefaultKinds);
	// only their listings are read.
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

// Ref names a for a person, as its kind's Audit.Ref says: #12, comment
// 2200000001 on #3, branch x.
func (a Artifact) Ref(kind string) string {
	return strings.NewReplacer("{number}", strconv.Itoa(a.Number), "{id}", strconv.FormatInt(a.ID, 10),
		"{thread}", strconv.Itoa(a.Thread), "{name}", a.Name).Replace(Rule(kind).Ref)
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

// Report is what Find found.
type Report struct {
	Repo           string      `json:"repo"`
	Since          time.Time   `json:"since,omitzero"`
	Login          string      `json:"login,omitempty"`
	Groups         []Group     `json:"groups"`
	LookAlikes     []LookAlike `json:"look_alikes,omitempty"`
	OpenDuplicates int         `json:"open_duplicates"`
	// Listed counts what Find read, by listing (Audit.Listing).
	Listed map[string]int `json:"listed"`
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
	if Numbered(it.kind) {
		a.Number, a.Open, a.SHA = it.l.Number, it.l.State == "open", it.l.HeadSHA
	} else {
		a.ID, a.Open = it.l.ID, true
	}
	if onThread(it.kind) {
		a.Thread = it.l.Number
	}
	if strings.Contains(Rule(it.kind).Ref, "{name}") {
		a.Name = it.l.Head
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
		kinds = DefaultKinds
	}
	for _, k := range kinds {
		f.kinds[k] = true
	}
	login, err := gh.Login(ctx)
	if err != nil {
		return nil, err
	}
	f.login = login
	rep := &Report{Repo: opts.Repo.String(), Since: opts.Since, Login: login, Groups: []Group{}, Listed: map[string]int{}}

	// Each kind's artifacts, from the listing its Audit names, but
	// events (a label added again), grouped apart.
	lists := gh.Lists(opts.Repo, opts.Since, opts.Progress)
	selected := slices.DeleteFunc(slices.Clone(AllKinds), func(k string) bool { return !f.kinds[k] || Rule(k).Listing == "" })
	var all []*item
	for _, kind := range selected {
		if same(kind, "label") {
			continue
		}
		listed, err := lists.Get(ctx, Rule(kind).Listing)
		if err != nil {
			return nil, err
		}
		rep.Listed[Rule(kind).Listing] = len(listed)
		for _, l := range listed {
			it, err := f.newItem(ctx, kind, l)
			if err != nil {
				return nil, err
			}
			all = append(all, it)
		}
	}

	// Candidates: sets of our artifacts that the evidence puts together,
	// strongest first; each becomes a group once what people did to its
	// members is read. Events come last.
	sets, events := f.keySets(all), []Group(nil)
	for _, kind := range selected {
		var err error
		var more []candidate
		switch a := Rule(kind); {
		case same(kind, "label"):
			var gs []Group
			gs, err = f.labelGroups(ctx, kind, lists)
			events = append(events, gs...)
		case same(kind, "head"):
			more, err = f.headSets(ctx, kind, all)
		default:
			more = f.exact(all, kind, a.Detail, func(it *item) string { return sig(a, it.l) })
		}
		if err != nil {
			return nil, err
		}
		sets = append(sets, more...)
	}
	var groups []Group
	for _, c := range sets {
		g, err := f.group(ctx, c)
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	for _, g := range append(groups, events...) {
		if f.byAuthors(g) {
			rep.Groups = append(rep.Groups, g)
			rep.OpenDuplicates += g.OpenDuplicates()
		}
	}
	rep.LookAlikes = f.lookAlikes(all)
	return rep, nil
}

// labelGroups groups, per issue or pull request and label, the adds by
// our identity when there are two or more: the first is kept, each later
// one is a duplicate that is not open and Differs (Audit.Leave), so
// nothing acts on it.
func (f *finder) labelGroups(ctx context.Context, kind string, lists *ghcheck.Lists) ([]Group, error) {
	adds, err := lists.Get(ctx, Rule(kind).Listing)
	if err != nil {
		return nil, err
	}
	order, by := buckets(adds, func(ad ghcheck.Listed) (k string, ours bool) {
		if err == nil {
			ours, err = f.isOurs(ctx, ad.Author)
		}
		return strconv.Itoa(ad.Number) + "\x00" + strings.ToLower(ad.Title), ours && err == nil
	})
	if err != nil {
		return nil, err
	}
	var out []Group
	for _, k := range order {
		evs := by[k]
		if len(evs) < 2 {
			continue
		}
		at := func(ev ghcheck.Listed) Artifact {
			return Artifact{Number: ev.Number, URL: ev.URL, Author: ev.Author, Created: ev.Created, Ours: true}
		}
		g := Group{Kind: kind, Evidence: EvidenceExact, Detail: fmt.Sprintf("label %q applied by us %d times", evs[0].Title, len(evs)),
			Rule: "the first add", Keep: at(evs[0]), Duplicates: []Artifact{}, KeepListed: evs[0]}
		for _, ev := range evs[1:] {
			d := at(ev)
			d.Differs = Rule(kind).Leave
			s := ev.Created.Sub(evs[0].Created).Seconds()
			d.AfterSeconds = &s
			g.Duplicates = append(g.Duplicates, d)
		}
		g.SpanSeconds = evs[len(evs)-1].Created.Sub(evs[0].Created).Seconds()
		out = append(out, g)
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
		a := it.artifact() // its number or its id, as its kind names it
		if k := f.opts.Recorded(kind, a.Number, a.ID); k != "" && !slices.Contains(it.keys, k) {
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
	if Numbered(it.kind) {
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
			case ev.Kind == "cross-referenced" && ev.SourcePR && !same(it.kind, "head"): // a pull request linking an issue
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
		if same(it.kind, "head") {
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
	if !Rule(it.kind).Reactors && it.l.Reactions > 0 {
		// Who reacted is not read here: the reactions count as a person's.
		add(fmt.Sprintf("%d reactions", it.l.Reactions), "someone")
	} else if it.l.Reactions > 0 {
		var id int64
		if onThread(it.kind) {
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
			w += " by " + strings.Join(slices.Sorted(maps.Keys(people)), ", ")
		}
		out = append(out, w)
	}
	it.human = strings.Join(out, "; ")
	if onThread(it.kind) {
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
	if !same(m.kind, "head") {
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

// SameText reports whether a and b, two artifacts of kind, hold the same
// text: the same body by NormalizeBody, and what its Audit.Same names (a
// thread, a title by NormalizeTitle, ...), a pull request's head aside.
func SameText(kind string, a, b ghcheck.Listed) bool {
	for _, p := range append([]string{"body"}, Rule(kind).Same...) {
		if part(p, a) != part(p, b) {
			return false
		}
	}
	return true
}

// sig is what two of our artifacts of a kind share when they are the same
// act: their author and what its Audit.Same names; "" for one that is
// never a duplicate, an issue a person closed as completed (one like it
// filed later is a recurrence).
func sig(a effect.Audit, l ghcheck.Listed) string {
	if l.StateReason == "completed" {
		return ""
	}
	parts := []string{strings.ToLower(l.Author)}
	for _, p := range a.Same {
		parts = append(parts, part(p, l))
	}
	return strings.Join(parts, "\x00")
}

// sameParts are the words of Audit.Same the audit knows, each what l
// holds of it; "" for a head or a label, which are compared apart.
var sameParts = map[string]func(l ghcheck.Listed) string{
	"thread": func(l ghcheck.Listed) string { return strconv.Itoa(l.Number) },
	"title":  func(l ghcheck.Listed) string { return NormalizeTitle(l.Title) },
	"body":   func(l ghcheck.Listed) string { return NormalizeBody(l.Body) },
	"event":  func(l ghcheck.Listed) string { return l.State },
	"line":   func(l ghcheck.Listed) string { return l.Position },
	"tag":    func(l ghcheck.Listed) string { return l.Head },
	"base":   func(l ghcheck.Listed) string { return l.Base },
	"head":   func(ghcheck.Listed) string { return "" },
	"label":  func(ghcheck.Listed) string { return "" },
}

// part is what l holds of one part of Audit.Same (sameParts).
func part(name string, l ghcheck.Listed) string {
	if p, ok := sameParts[name]; ok {
		return p(l)
	}
	return ""
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
func buckets[T any, K comparable](items []T, key func(T) (K, bool)) ([]K, map[K][]T) {
	by := map[K][]T{}
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
		if onThread(it.kind) {
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

// headSets groups pull requests (kind's Audit.Same names "head"): the
// same author, the same base, heads at the same commit or with the same
// tree. Trees are read only for PRs that share an author and base with
// another, once per commit; a head GitHub cannot return (404, 422) has no
// tree, and groups by its commit alone.
func (f *finder) headSets(ctx context.Context, kind string, all []*item) ([]candidate, error) {
	a := Rule(kind)
	order, byAB := buckets(all, func(it *item) (string, bool) {
		s := sig(a, it.l)
		return s, it.kind == kind && it.ours && !f.inGrp[it] && it.l.HeadSHA != "" && s != ""
	})
	var out []candidate
	for _, k := range order {
		if len(byAB[k]) < 2 {
			continue
		}
		var err error
		heads, byHead := buckets(byAB[k], func(it *item) (tree string, ok bool) {
			if err == nil {
				tree, err = f.treeOf(ctx, it.l.HeadSHA)
			}
			return cmp.Or(tree, "commit "+it.l.HeadSHA), err == nil // an unknown tree equals nothing
		})
		if err != nil {
			return nil, err
		}
		for _, h := range heads {
			set := byHead[h]
			if len(set) < 2 || apart(set) {
				continue
			}
			detail := "the same author, the same base " + set[0].l.Base + ", heads at the same commit"
			if slices.ContainsFunc(set, func(it *item) bool { return it.l.HeadSHA != set[0].l.HeadSHA }) {
				detail += " or with the same tree"
			}
			out = append(out, f.set(kind, EvidenceExact, detail, set))
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
		if !Numbered(it.kind) {
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
	isPR := same(g.Kind, "head")
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
	if Numbered(g.Kind) {
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
			return fmt.Sprintf("%s has new activity since the listing (%s)", d.Ref(g.Kind), strings.Join(slices.Sorted(maps.Keys(who)), ", ")), nil
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
	case now.Title != was.Title || now.Body != was.Body || (onThread(kind) && !now.Updated.Equal(was.Updated)):
		return "was edited since the listing"
	case now.HeadSHA != was.HeadSHA:
		return "has another head commit since the listing"
	case !strings.EqualFold(now.Author, was.Author):
		return "has another author"
	}
	return ""
}
