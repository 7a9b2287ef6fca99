package ghcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/taskkey"
)

// FindPR looks for our pull request for q.Key.
//
// By head, for each of q.Heads ("branch" means a branch of r.Owner,
// "owner:branch" a branch of that owner): GET
// /repos/{o}/{r}/pulls?state=all&head=OWNER:BRANCH, every page. The list is
// consistent (search is not), but its filter is not trusted: a malformed
// head makes GitHub ignore it and answer every pull request, so each
// candidate must have exactly that head branch and owner, the base q.Base
// (when set), an author that is ours and q.Key's marker on the first line
// of its body.
//
// And by the key's label, for a pull request a retry opened from another
// head: GET /repos/{o}/{r}/issues?labels=LABEL&state=all, every page,
// keeping pull requests (items with pull_request) that are ours and carry
// the marker; GET /repos/{o}/{r}/pulls/{n} then tells whether it was
// merged. A label that does not exist yet answers an empty list, so the
// look-up never writes. The head and label lists (and the token's
// identity, when it is not cached) are read concurrently: one round trip,
// one read more than reading the label only after the heads found nothing,
// and only when a head matches.
//
// Last, for a pull request created by an attempt that died before it
// could add the label (and whose head the ledger no longer remembers): the
// RecentPRs most recently created pull requests, GET
// /repos/{o}/{r}/pulls?state=all&sort=created&direction=desc, one page.
// Search is never used: it lags minutes behind writes.
//
// With q.Since (a rerun after an earlier attempt, whose start the ledger
// recorded), the newest pull requests back to q.Since come first and
// answer alone when they fit in one page; then the newest-PR scan
// is not repeated at the end. With q.SkipRecent it is left out.
//
// Found: the oldest matching pull request, open, closed or merged (the step
// happened). Absent: none, or the repository does not exist for this token
// (404; the create then fails too). Unknown: a read failed.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#list-pull-requests
func (c *Client) FindPR(ctx context.Context, r Repo, q PRQuery) Result {
	if err := checkKey(q.Key); err != nil {
		return c.unknown(fmt.Errorf("find pull request: %w", err))
	}
	heads, err := parseHeads(r, q.Heads)
	if err != nil {
		return c.unknown(fmt.Errorf("find pull request: %w", err))
	}

	// After an earlier attempt (q.Since): every pull request any attempt
	// made was created after q.Since, so the newest pull requests back to
	// it answer alone, whatever the head, labelled or not. Only when they
	// run past one page (a busy repository, an old attempt) are the
	// head and label look-ups made as well.
	if !q.Since.IsZero() {
		ours, err := c.oursFunc(ctx)
		if err != nil {
			return c.unknown(fmt.Errorf("find pull request: %w", err))
		}
		q.Since = c.onGitHub(q.Since) // compared with created_at, GitHub's clock
		res, complete := c.findRecentPR(ctx, c.newRun(), r, q, ours)
		if res.State != Absent || complete {
			return res
		}
	}

	label := taskkey.Label(q.Key)
	var ours func(string) bool
	var oursErr, labelErr error
	var labelled []*github.Issue
	byHead := make([][]*github.PullRequest, len(heads))
	headErr := make([]error, len(heads))
	reads := []func(){
		func() { ours, oursErr = c.oursFunc(ctx) },
		func() { labelled, labelErr = c.allByLabel(ctx, r, label) },
	}
	for i, h := range heads {
		reads = append(reads, func() { byHead[i], headErr[i] = c.allByHead(ctx, r, h) })
	}
	together(reads...)
	if oursErr != nil {
		return c.unknown(fmt.Errorf("find pull request: %w", oursErr))
	}

	var best *github.PullRequest
	for i, h := range heads {
		if notFound(headErr[i]) {
			return Result{State: Absent}
		}
		if headErr[i] != nil {
			return c.unknown(fmt.Errorf("list pull requests of %s with head %s:%s: %w", r, h.owner, h.branch, headErr[i]))
		}
		for _, pr := range byHead[i] {
			if prMatches(pr, h, q, ours) && (best == nil || pr.GetNumber() < best.GetNumber()) {
				best = pr
			}
		}
	}
	if best != nil {
		return Result{State: Found, Artifact: prArtifact(best)}
	}

	if notFound(labelErr) {
		return Result{State: Absent}
	}
	if labelErr != nil {
		return c.unknown(fmt.Errorf("list pull requests of %s labeled %s: %w", r, label, labelErr))
	}
	var byLabel *github.Issue
	for _, is := range labelled {
		if is.IsPullRequest() && ours(is.GetUser().GetLogin()) && taskkey.HasMarker(is.GetBody(), q.Key) &&
			(byLabel == nil || is.GetNumber() < byLabel.GetNumber()) {
			byLabel = is
		}
	}
	if byLabel == nil {
		// The last look: the newest pull requests, unless skipped or, with
		// Since, read first already.
		if q.SkipRecent || !q.Since.IsZero() {
			return Result{State: Absent}
		}
		res, _ := c.findRecentPR(ctx, c.newRun(), r, q, ours)
		return res
	}

	// The issue view has no "merged": read the pull request itself.
	pr, err := get(ctx, c.newRun(), func(ctx context.Context) (*github.PullRequest, *github.Response, error) {
		return c.gh.PullRequests.Get(ctx, r.Owner, r.Name, byLabel.GetNumber())
	})
	if err != nil {
		// It exists either way; only open/closed/merged is uncertain.
		a := issueArtifact(byLabel)
		a.Warning = c.redact(fmt.Errorf("read pull request #%d: %w; its state may be merged", byLabel.GetNumber(), err)).Error()
		return Result{State: Found, Artifact: a}
	}
	return Result{State: Found, Artifact: prArtifact(pr)}
}

// allByHead reads every page of GET
// /repos/{o}/{r}/pulls?state=all&head=OWNER:BRANCH, in a run of its own.
func (c *Client) allByHead(ctx context.Context, r Repo, h head) ([]*github.PullRequest, error) {
	return every(ctx, c.newRun(), func(ctx context.Context, opts github.ListOptions) ([]*github.PullRequest, *github.Response, error) {
		return c.gh.PullRequests.List(ctx, r.Owner, r.Name, &github.PullRequestListOptions{State: "all", Head: h.owner + ":" + h.branch, ListOptions: opts})
	})
}

// CreatePR opens a pull request whose body starts with key's marker, then
// labels it with the key's label and p.Labels.
//
// POST /repos/{o}/{r}/pulls is not idempotent and is never retried once it
// may have been sent. GitHub refuses a second open pull request for the
// same head and base with 422 "A pull request already exists for
// owner:branch." (ClassExists: find it, adopt it if ours); a closed one
// does not block a new one. A body too long for GitHub once the marker is
// added, an invalid key or label is refused before sending (ClassRefused).
//
// The labels are added by POST /repos/{o}/{r}/issues/{n}/labels (GitHub's
// create takes no labels), which is idempotent and retried: two
// content-creating requests in all; if it fails the pull request still exists, and
// Artifact.Warning says so. With p.LabelLater the labels are left to the
// caller (MendPRLabels): the create is then one request, and the caller may
// answer before labelling.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#create-a-pull-request
func (c *Client) CreatePR(ctx context.Context, r Repo, key string, p NewPR) (Artifact, error) {
	labels, err := checkCreate(key, p.Body, p.Labels)
	if err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("create pull request: %w", err))
	}
	pr, class, err := send(ctx, c.newRun(), createOnce, func(ctx context.Context) (*github.PullRequest, *github.Response, error) {
		return c.gh.PullRequests.Create(ctx, r.Owner, r.Name, &github.NewPullRequest{
			Title: github.String(p.Title),
			Head:  github.String(p.Head),
			Base:  github.String(p.Base),
			Body:  github.String(taskkey.WithMarker(key, p.Body)),
			Draft: github.Bool(p.Draft),
		})
	})
	if err != nil {
		return Artifact{}, c.createErr(class, c.prCreateRefused(ctx, r, key, p, err))
	}
	a := prArtifact(pr)
	if !p.LabelLater {
		a.Warning = c.addLabels(ctx, r, a.Number, key, labels)
	}
	return a, nil
}

// addLabels labels issue or pull request n and returns a warning, or "".
//
// GitHub API docs: https://docs.github.com/rest/issues/labels#add-labels-to-an-issue
//
// GitHub creates a label that does not exist yet (the key's label on a
// first create) as it adds it, in KeyLabelColor: no request is spent on
// making it first (see KeyLabelDescription for its description).
//
// The add is sent again only after a read shows labels missing: an answer
// that may have been applied (a 5xx, a dropped connection) is followed by
// GET .../issues/{n}, never by a blind second POST, which would apply again
// a label a person removed meanwhile and fire its labeled workflows twice
// (peter-evans/create-pull-request#4370).
func (c *Client) addLabels(ctx context.Context, r Repo, n int, key string, labels []string) string {
	missing := labels
	for try := 0; ; try++ {
		got, class, err := c.postLabels(ctx, r, n, missing)
		if err == nil && !hasLabel(got, taskkey.Label(key)) {
			return fmt.Sprintf("add labels to #%d: GitHub did not apply %s (the token may lack triage access); it was created, and ghonce still finds it by head branch and marker", n, taskkey.Label(key))
		}
		if err == nil {
			return ""
		}
		if class == ClassMaybe && try < maxRetries {
			if is, rerr := c.getIssue(ctx, r, n); rerr == nil {
				missing = slices.DeleteFunc(slices.Clone(missing), func(l string) bool { return hasLabel(is.Labels, l) })
				if len(missing) == 0 {
					return ""
				}
				continue
			}
		}
		return c.redact(fmt.Errorf("add labels %s to #%d: %w; it was created, and ghonce still finds it by head branch and marker", strings.Join(labels, ", "), n, err)).Error()
	}
}

// head is one place a pull request's head may be.
type head struct{ owner, branch string }

// parseHeads parses and deduplicates "branch" and "owner:branch".
func parseHeads(r Repo, in []string) ([]head, error) {
	var out []head
	seen := map[string]bool{}
	for _, s := range in {
		if err := CheckHead(s); err != nil {
			return nil, err
		}
		h := head{owner: r.Owner, branch: s}
		if o, b, ok := strings.Cut(s, ":"); ok {
			h = head{owner: o, branch: b}
		}
		if h.owner == "" {
			return nil, fmt.Errorf("invalid head %q: want BRANCH or OWNER:BRANCH", s)
		}
		k := strings.ToLower(h.owner) + ":" + h.branch
		if !seen[k] {
			seen[k] = true
			out = append(out, h)
		}
	}
	return out, nil
}

// CheckHead refuses a pull request's head FindPR would refuse before
// sending anything: it is BRANCH, or OWNER:BRANCH for a fork, with a valid
// branch name and an owner holding no '/', ':' or space.
func CheckHead(s string) error {
	branch := s
	if o, b, ok := strings.Cut(s, ":"); ok {
		if o == "" || strings.ContainsAny(o, "/: ") {
			return fmt.Errorf("invalid head %q: want BRANCH or OWNER:BRANCH", s)
		}
		branch = b
	}
	if err := taskkey.CheckBranchName(branch); err != nil {
		return fmt.Errorf("invalid head %q: %w", s, err)
	}
	return nil
}

// RecentPRs is how many of the most recently created pull requests FindPR
// reads, as its last look-up, for ours: one page. A pull request whose
// attempt died between creating it and labelling it, rerun with another
// head and with its ledger lost, is found as long as fewer than this many
// pull requests were opened in the repository in between.
const RecentPRs = 100

// findRecentPR reads the newest pull requests for ours with q.Key's marker
// and base: one page of RecentPRs, GET
// /repos/{o}/{r}/pulls?state=all&sort=created&direction=desc. complete says
// the page reached q.Since (so an absent answer proves that none was created
// after it); it is false without q.Since. One page: with Since it stands in
// for the newest-PR page FindPR would read last anyway, so a busy repository
// costs no more than without Since. The list is consistent; pull requests
// opened while it is read push older ones down, never out of it.
func (c *Client) findRecentPR(ctx context.Context, rn *run, r Repo, q PRQuery, ours func(string) bool) (res Result, complete bool) {
	var best *github.PullRequest
	err := rn.read(ctx, func(ctx context.Context) (*github.Response, error) {
		prs, resp, err := c.gh.PullRequests.List(ctx, r.Owner, r.Name, &github.PullRequestListOptions{
			State: "all", Sort: "created", Direction: "desc",
			ListOptions: github.ListOptions{PerPage: RecentPRs},
		})
		if err != nil {
			return resp, err
		}
		for _, pr := range prs {
			if !q.Since.IsZero() && pr.GetCreatedAt().Before(q.Since) {
				complete = true
			}
			if (q.Base == "" || pr.GetBase().GetRef() == q.Base) && ours(pr.GetUser().GetLogin()) && taskkey.HasMarker(pr.GetBody(), q.Key) &&
				(best == nil || pr.GetNumber() < best.GetNumber()) {
				best = pr
			}
		}
		if resp.NextPage == 0 && !q.Since.IsZero() {
			complete = true // every pull request of the repository was read
		}
		return resp, nil
	})
	switch {
	case notFound(err):
		return Result{State: Absent}, true
	case err != nil:
		return c.unknown(fmt.Errorf("list recent pull requests of %s: %w", r, err)), false
	case best != nil:
		return Result{State: Found, Artifact: prArtifact(best)}, true
	}
	return Result{State: Absent}, complete
}

// prMatches verifies a listed pull request instead of trusting the filter.
func prMatches(pr *github.PullRequest, h head, q PRQuery, ours func(string) bool) bool {
	hd := pr.GetHead()
	if hd.GetRef() != h.branch {
		return false
	}
	owner := hd.GetRepo().GetOwner().GetLogin()
	if owner == "" { // the head repository was deleted; the label keeps "owner:branch"
		owner, _, _ = strings.Cut(hd.GetLabel(), ":")
	}
	if !strings.EqualFold(owner, h.owner) {
		return false
	}
	if q.Base != "" && pr.GetBase().GetRef() != q.Base {
		return false
	}
	return ours(pr.GetUser().GetLogin()) && taskkey.HasMarker(pr.GetBody(), q.Key)
}

func prArtifact(pr *github.PullRequest) Artifact {
	state := pr.GetState()
	if pr.GetMerged() || pr.MergedAt != nil {
		state = "merged"
	}
	a := Artifact{
		Number: pr.GetNumber(),
		URL:    pr.GetHTMLURL(),
		Author: pr.GetUser().GetLogin(),
		State:  state,
		Title:  pr.GetTitle(),
		Body:   pr.GetBody(),
		Head:   pr.GetHead().GetLabel(),
		// Created: when it was made, for a run that must say so.
		Created: pr.GetCreatedAt().Time,
	}
	for _, l := range pr.Labels {
		a.Labels = append(a.Labels, l.GetName())
	}
	return a
}

// MendPRLabels adds to pull request a the labels a CreatePR with key and
// labels would have given it and it lacks: an attempt that died between
// creating the pull request and labelling it leaves it bare. It returns a
// warning, or "" (nothing missing, or all added). POST
// /repos/{o}/{r}/issues/{n}/labels adds without removing and is idempotent.
func (c *Client) MendPRLabels(ctx context.Context, r Repo, a Artifact, key string, labels []string) string {
	want, err := checkCreate(key, "", labels)
	if err != nil {
		return err.Error()
	}
	have := map[string]bool{}
	for _, l := range a.Labels {
		have[strings.ToLower(l)] = true
	}
	var missing []string
	for _, l := range want {
		if !have[strings.ToLower(l)] {
			missing = append(missing, l)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return c.addLabels(ctx, r, a.Number, key, missing)
}

func hasLabel(ls []*github.Label, name string) bool {
	for _, l := range ls {
		if strings.EqualFold(l.GetName(), name) {
			return true
		}
	}
	return false
}

// checkKey refuses a malformed key: its marker could never be found again.
func checkKey(key string) error {
	if !taskkey.Valid(key) {
		return fmt.Errorf("invalid key %q: want %s followed by 32 base32 characters", key, taskkey.Prefix)
	}
	return nil
}

// CheckCreate refuses a body or labels CreatePR, CreateIssue and
// CreateComment would refuse before sending anything for key: a body too
// long for GitHub once key's marker is added, or a label GitHub cannot
// hold. A caller that validates its input with it (reconcile's kinds)
// refuses exactly what this layer refuses.
func CheckCreate(key, body string, labels []string) error {
	_, err := checkCreate(key, body, labels)
	return err
}

// checkCreate validates what a create of an issue or pull request sends and
// returns its labels: the key's label first, then the user's, without
// duplicates (GitHub compares labels without case).
func checkCreate(key, body string, user []string) ([]string, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := taskkey.CheckBody(key, body); err != nil {
		return nil, err
	}
	labels := []string{taskkey.Label(key)}
	seen := map[string]bool{strings.ToLower(labels[0]): true}
	for _, l := range user {
		if err := taskkey.CheckLabel(l); err != nil {
			return nil, err
		}
		if !seen[strings.ToLower(l)] {
			seen[strings.ToLower(l)] = true
			labels = append(labels, l)
		}
	}
	return labels, nil
}
