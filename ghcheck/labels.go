package ghcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/internal/human"
	"github.com/ghonce/ghonce/taskkey"
)

// The key label (taskkey.Label) is how ghonce finds an issue, or a pull
// request whose head changed, again when the ledger is gone.
//
// It is never made on the hot path. GitHub creates a label that does not
// exist when an issue is created with it or it is added to an issue or
// pull request, in the colour KeyLabelColor, so a first create spends no
// write on it: an issue costs one content-creating request, a pull request
// two (the create, then the labels). A look-up never writes either: listing
// issues by a label that does not exist answers an empty list, which proves
// absence as well as a label create answering 201 did. What GitHub does not
// give the label is KeyLabelDescription; DescribeKeyLabels adds it, off the
// hot path (`ghonce labels describe`), so a maintainer reading the label
// list knows it can go once the work has settled (`ghonce labels prune`).
const (
	KeyLabelColor       = "ededed"
	KeyLabelDescription = "ghonce key: finds this artifact again after a crash (safe to delete once settled)"
)

// DescribeKeyLabels gives every key label of repository r (a name starting
// "ghonce:gk") that has no description KeyLabelDescription, and returns
// how many it changed. It reads GET /repos/{o}/{r}/labels, every page, and
// sends one PATCH /repos/{o}/{r}/labels/{name} per bare label: idempotent,
// retried, and never on the way to a create. A label someone described
// otherwise is left alone.
//
// GitHub API docs: https://docs.github.com/rest/issues/labels#update-a-label
func (c *Client) DescribeKeyLabels(ctx context.Context, r Repo) (int, error) {
	var bare []string
	err := c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		ls, resp, err := c.gh.Issues.ListLabels(ctx, r.Owner, r.Name, &github.ListOptions{Page: page, PerPage: 100})
		for _, l := range ls {
			if strings.HasPrefix(strings.ToLower(l.GetName()), keyLabelPrefix) && l.GetDescription() == "" {
				bare = append(bare, l.GetName())
			}
		}
		return resp, err
	})
	if err != nil {
		return 0, c.redact(worded(err, "list labels of "+r.String(), "the token needs read access to the repository"))
	}
	n := 0
	for _, name := range bare {
		err := c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
			_, resp, err := c.gh.Issues.EditLabel(ctx, r.Owner, r.Name, name, &github.Label{
				Color: github.String(KeyLabelColor), Description: github.String(KeyLabelDescription),
			})
			return resp, err
		})
		switch {
		case httpStatus(err) == http.StatusNotFound:
			continue // deleted meanwhile (a prune)
		case err != nil:
			return n, c.redact(worded(err, fmt.Sprintf("describe label %s in %s", name, r), "the token needs write access to the repository's labels (triage or more)"))
		}
		n++
	}
	return n, nil
}

// keyLabelPrefix starts every key label's name, lower-cased.
var keyLabelPrefix = strings.ToLower(taskkey.Label("gk"))

// DeleteKeyLabel deletes key's label from repository r, and with it from
// every issue and pull request that carries it. It reports false, with no
// error, for a label that does not exist (deleted already). DELETE
// /repos/{o}/{r}/labels/{name} is idempotent and retried.
//
// GitHub API docs: https://docs.github.com/rest/issues/labels#delete-a-label
func (c *Client) DeleteKeyLabel(ctx context.Context, r Repo, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, fmt.Errorf("delete label: %w", err)
	}
	name := taskkey.Label(key)
	err := c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		return c.gh.Issues.DeleteLabel(ctx, r.Owner, r.Name, name)
	})
	switch {
	case err == nil:
		return true, nil
	case httpStatus(err) == http.StatusNotFound:
		return false, nil
	}
	return false, c.redact(worded(err, fmt.Sprintf("delete label %s in %s", name, r), "the token needs write access to the repository's labels (triage or more)"))
}

// LabelsQuery is what FindLabels looks for: that labels were added to
// issue or pull request Number by an earlier attempt of one act.
type LabelsQuery struct {
	Number int
	Labels []string
	// Since, when not zero, is when the act's first attempt began: a
	// labeled event of ours at or after it, for one of Labels, is that
	// attempt's add (one POST applies all its labels at once).
	Since time.Time
	// Fresh says no attempt of the act was ever made (the ledger vouches
	// for it): only the labels being there already counts, and the events
	// are not read.
	Fresh bool
}

// FindLabels answers whether the add of q.Labels to issue or pull request
// q.Number is in place or was made by an earlier attempt. Labels carry no
// marker, so ours are told by who applied them: GitHub records a labeled
// event, with its actor, for each label an add newly applies.
//
// It reads GET /repos/{o}/{r}/issues/{n} (its labels, complete). Found
// when every label of q is there, whoever added it: adding it again would
// change nothing and fire nothing. Otherwise, unless q.Fresh, it reads GET
// /repos/{o}/{r}/issues/{n}/events, every page (consistent; oldest first):
// found when a labeled event by our identity (or a trusted login) for a
// label of q is at or after q.Since, so a label a person removed after our
// add is not added back; with no Since (a lost ledger) only when every
// label of q is there or was added by us at some time. A 404 is Absent:
// the add will be refused itself, nothing applied. A failed read is
// Unknown.
//
// GitHub API docs: https://docs.github.com/rest/issues/events#list-issue-events
func (c *Client) FindLabels(ctx context.Context, r Repo, q LabelsQuery) Result {
	if err := CheckLabels(q.Number, q.Labels); err != nil {
		return c.unknown(fmt.Errorf("find labels: %w", err))
	}
	is, err := c.getIssue(ctx, r, q.Number)
	switch {
	case notFound(err):
		return Result{State: Absent}
	case err != nil:
		return c.unknown(fmt.Errorf("read %s#%d: %w", r, q.Number, err))
	}
	art := issueArtifact(is)
	done := map[string]bool{}
	for _, l := range is.Labels {
		done[strings.ToLower(l.GetName())] = true
		art.Labels = append(art.Labels, l.GetName())
	}
	if everyIn(q.Labels, done) {
		return Result{State: Found, Artifact: art}
	}
	if q.Fresh {
		return Result{State: Absent}
	}
	ours, err := c.oursFunc(ctx)
	if err != nil {
		return c.unknown(fmt.Errorf("find labels: %w", err))
	}
	since := c.onGitHub(q.Since)
	want := map[string]bool{}
	for _, l := range q.Labels {
		want[strings.ToLower(l)] = true
	}
	byUs := false
	err = c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		evs, resp, err := c.gh.Issues.ListIssueEvents(ctx, r.Owner, r.Name, q.Number, &github.ListOptions{Page: page, PerPage: 100})
		for _, ev := range evs {
			name := strings.ToLower(ev.GetLabel().GetName())
			if ev.GetEvent() != "labeled" || !want[name] || !ours(ev.GetActor().GetLogin()) || ev.GetCreatedAt().Before(since) {
				continue
			}
			byUs, done[name] = true, true
		}
		return resp, err
	})
	switch {
	case notFound(err):
		return Result{State: Absent}
	case err != nil:
		return c.unknown(fmt.Errorf("list events of %s#%d: %w", r, q.Number, err))
	case !q.Since.IsZero() && byUs, q.Since.IsZero() && everyIn(q.Labels, done):
		return Result{State: Found, Artifact: art}
	}
	return Result{State: Absent}
}

func everyIn(labels []string, set map[string]bool) bool {
	for _, l := range labels {
		if !set[strings.ToLower(l)] {
			return false
		}
	}
	return true
}

// AddLabels adds labels to issue or pull request number: POST
// /repos/{o}/{r}/issues/{n}/labels, which adds to those there. It is not
// retried once it may have been applied (ClassMaybe): a label a person
// removed in between would be applied, and its labeled workflows fired,
// twice; FindLabels settles it. An answer that proves nothing was applied
// because GitHub does not see the issue yet (a 404, or a 422 "Could not
// resolve to a node", right after its create) is retried a few times;
// after that it is ClassRefused.
//
// GitHub API docs: https://docs.github.com/rest/issues/labels#add-labels-to-an-issue
func (c *Client) AddLabels(ctx context.Context, r Repo, number int, labels []string) (Artifact, error) {
	if err := CheckLabels(number, labels); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("add labels: %w", err))
	}
	got, class, err := c.postLabels(ctx, r, number, labels)
	if err != nil {
		return Artifact{}, c.createErr(class, issueRefused(err, r, number, fmt.Sprintf("add labels to %s#%d", r, number)))
	}
	a := Artifact{Number: number}
	for _, l := range got {
		a.Labels = append(a.Labels, l.GetName())
	}
	return a, nil
}

// postLabels sends POST .../issues/{n}/labels, again only after an answer
// that proves nothing was applied (notYetVisible).
func (c *Client) postLabels(ctx context.Context, r Repo, number int, labels []string) ([]*github.Label, Class, error) {
	for try := 0; ; try++ {
		got, class, err := send(ctx, c.newRun(), createOnce, func(ctx context.Context) ([]*github.Label, *github.Response, error) {
			return c.gh.Issues.AddLabelsToIssue(ctx, r.Owner, r.Name, number, labels)
		})
		if err == nil || !notYetVisible(err) || try == maxRetries {
			return got, class, err
		}
		c.logf("GitHub does not see %s#%d yet (%v); adding its labels again in %s", r, number, err, human.Duration(firstBackoff<<try))
		if serr := c.opts.Sleep(ctx, firstBackoff<<try); serr != nil {
			return nil, ClassNotSent, fmt.Errorf("wait to add labels: %w (after %w)", serr, err)
		}
	}
}

// notYetVisible reports whether err is GitHub not seeing an issue it has
// just made: a 404, or a 422 "Could not resolve to a node" (the GraphQL
// layer behind the labels endpoint). Either applied nothing.
func notYetVisible(err error) bool {
	er := refusal(err)
	if er == nil {
		return false
	}
	switch er.Response.StatusCode {
	case http.StatusNotFound:
		return true
	case http.StatusUnprocessableEntity:
		return containsFold(er.Message, "could not resolve")
	}
	return false
}

// CheckLabels refuses what FindLabels and AddLabels refuse before sending:
// a number that is not positive, no label, or a label GitHub cannot hold.
func CheckLabels(number int, labels []string) error {
	if err := CheckIssueNumber(number); err != nil {
		return err
	}
	if len(labels) == 0 {
		return errors.New("no label to add")
	}
	for _, l := range labels {
		if err := taskkey.CheckLabel(l); err != nil {
			return err
		}
	}
	return nil
}

func init() { listings["labeled"] = listLabeled }

// listLabeled lists every label added to an issue or pull request listed,
// read from each one's timeline: one Listed per add, with the issue's
// Number and URL, the label as Title, who added it as Author.
func listLabeled(ctx context.Context, l *Lists) ([]Listed, error) {
	issues, err := l.Get(ctx, issuesAndPulls)
	if err != nil {
		return nil, err
	}
	var out []Listed
	for _, it := range issues {
		evs, err := l.c.Timeline(ctx, l.repo, it.Number)
		if err != nil {
			return nil, err
		}
		for _, ev := range evs {
			if ev.Kind == "labeled" {
				out = append(out, Listed{Number: it.Number, URL: it.URL, Title: ev.Label, Author: ev.Actor, Created: ev.Created})
			}
		}
	}
	return out, nil
}
