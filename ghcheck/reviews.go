package ghcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/taskkey"
)

// ReviewComment is one inline comment of a review, by the names GitHub's
// POST .../reviews takes: Line (and StartLine for a range) on Side (LEFT
// or RIGHT, the diff's old or new text; GitHub's default is RIGHT).
type ReviewComment struct {
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Side      string `json:"side,omitempty"`
	StartLine int    `json:"start_line,omitempty"`
	StartSide string `json:"start_side,omitempty"`
	Body      string `json:"body"`
}

// NewReview is the review CreateReview makes: its Event is COMMENT, APPROVE
// or REQUEST_CHANGES; empty leaves the review pending (visible to its
// author only, until submitted). CommitID empty is the head GitHub sees.
type NewReview struct {
	Body, Event, CommitID string
	Comments              []ReviewComment
}

// reviewEvents are the events a review is submitted with.
var reviewEvents = map[string]bool{"COMMENT": true, "APPROVE": true, "REQUEST_CHANGES": true}

// CheckReview refuses what FindReview and CreateReview refuse before
// sending: an invalid key or pull request number, an event GitHub does not
// take, a body too long once the marker is added, a commit that is not a
// full SHA, and an inline comment without a path, a line or a text, on a
// side other than LEFT or RIGHT, or whose range does not end at its line.
func CheckReview(key string, number int, p NewReview) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := CheckIssueNumber(number); err != nil {
		return err
	}
	if p.Event != "" && !reviewEvents[p.Event] {
		return fmt.Errorf("invalid review event %q: want COMMENT, APPROVE or REQUEST_CHANGES", p.Event)
	}
	if err := taskkey.CheckBody(key, p.Body); err != nil {
		return err
	}
	if p.CommitID != "" && !taskkey.IsCommitSHA(p.CommitID) {
		return fmt.Errorf("invalid commit_id %q: want a commit's full SHA", p.CommitID)
	}
	for i, cm := range p.Comments {
		if err := checkReviewComment(cm); err != nil {
			return fmt.Errorf("inline comment %d: %w", i+1, err)
		}
	}
	return nil
}

func checkReviewComment(cm ReviewComment) error {
	switch {
	case strings.TrimSpace(cm.Path) == "":
		return errors.New("no path")
	case cm.Line <= 0:
		return fmt.Errorf("line %d: want the line's number in the file, 1 or more", cm.Line)
	case cm.StartLine < 0 || cm.StartLine > 0 && cm.StartLine >= cm.Line:
		return fmt.Errorf("start_line %d: want a line before line %d", cm.StartLine, cm.Line)
	case strings.TrimSpace(cm.Body) == "":
		return errors.New("no body")
	case len([]rune(cm.Body)) > taskkey.MaxBody:
		return fmt.Errorf("body of %d characters: GitHub keeps at most %d", len([]rune(cm.Body)), taskkey.MaxBody)
	}
	for _, s := range []string{cm.Side, cm.StartSide} {
		if s != "" && s != "LEFT" && s != "RIGHT" {
			return fmt.Errorf("side %q: want LEFT or RIGHT", s)
		}
	}
	return taskkey.CheckFilePath(cm.Path)
}

// FindReview looks for our review for key on pull request number
// (ListReviews: every page; the list is consistent right after a write,
// and a pending review is listed to its author only, which is us). A
// review counts only if its author is ours and its body's first line is
// key's marker.
//
// Found: the oldest such review that is submitted, or, when event is ""
// (a pending review is what is asked), pending. A pending one when event
// is set is not the review asked for: Absent, and CreateReview submits it
// instead of making another. No such pull request (or repository for this
// token) is Absent: CreateReview will be refused alike. Unknown: a read
// failed.
func (c *Client) FindReview(ctx context.Context, r Repo, number int, key, event string) Result {
	rv, err := c.ourReview(ctx, r, number, key)
	switch {
	case err != nil:
		return c.unknown(fmt.Errorf("find review: %w", err))
	case rv == nil || rv.State == "PENDING" && event != "":
		return Result{State: Absent}
	}
	return Result{State: Found, Artifact: reviewArtifact(number, *rv)}
}

// ourReview returns the oldest review of ours carrying key's marker on
// pull request number (a submitted one before a pending one), or nil.
func (c *Client) ourReview(ctx context.Context, r Repo, number int, key string) (*Review, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if err := CheckIssueNumber(number); err != nil {
		return nil, err
	}
	ours, err := c.oursFunc(ctx)
	if err != nil {
		return nil, err
	}
	rvs, err := c.ListReviews(ctx, r, number)
	if err != nil {
		return nil, err
	}
	var best *Review
	for i, rv := range rvs { // oldest first
		if ours(rv.Author) && taskkey.HasMarker(rv.Body, key) && (best == nil || best.State == "PENDING" && rv.State != "PENDING") {
			best = &rvs[i]
		}
	}
	return best, nil
}

// CreateReview reviews pull request number: POST
// /repos/{o}/{r}/pulls/{number}/reviews, one request carrying the body
// (its first line key's marker), the event, the commit and the inline
// comments. It is not idempotent and is never retried once it may have
// been sent.
//
// GitHub keeps at most one pending review per user and pull request and
// refuses any create while one is there (422). When that pending review is
// ours and carries key's marker (a pending flow a crash cut short), it is
// ours to settle: it is submitted with p's event and body (POST
// .../reviews/{id}/events), never doubled. Anyone else's pending review of
// this identity is a refusal that says so. APPROVE and REQUEST_CHANGES on
// the identity's own pull request are refused by GitHub (ClassRefused).
//
// GitHub API docs: https://docs.github.com/rest/pulls/reviews#create-a-review-for-a-pull-request
func (c *Client) CreateReview(ctx context.Context, r Repo, number int, key string, p NewReview) (Artifact, error) {
	if err := CheckReview(key, number, p); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("create review: %w", err))
	}
	req := &github.PullRequestReviewRequest{Body: github.String(taskkey.WithMarker(key, p.Body))}
	if p.Event != "" {
		req.Event = github.String(p.Event)
	}
	if p.CommitID != "" {
		req.CommitID = github.String(p.CommitID)
	}
	for _, cm := range p.Comments {
		d := &github.DraftReviewComment{Path: github.String(cm.Path), Line: github.Int(cm.Line), Body: github.String(cm.Body)}
		if cm.Side != "" {
			d.Side = github.String(cm.Side)
		}
		if cm.StartLine > 0 {
			d.StartLine = github.Int(cm.StartLine)
		}
		if cm.StartSide != "" {
			d.StartSide = github.String(cm.StartSide)
		}
		req.Comments = append(req.Comments, d)
	}
	rv, class, err := send(ctx, c.newRun(), createOnce, func(ctx context.Context) (*github.PullRequestReview, *github.Response, error) {
		return c.gh.PullRequests.CreateReview(ctx, r.Owner, r.Name, number, req)
	})
	did := fmt.Sprintf("review %s#%d", r, number)
	if er := refusal(err); er != nil && er.Response.StatusCode == http.StatusUnprocessableEntity && containsFold(answerText(er), "pending review") {
		return c.settlePendingReview(ctx, r, number, key, p, err)
	}
	if err != nil {
		return Artifact{}, c.createErr(class, reviewRefused(err, r, number, did, p.Event))
	}
	return reviewArtifact(number, listedReview(rv)), nil
}

// SubmitReview ends a pending flow: our pending review for key on pull
// request number is submitted with p's event and body (POST
// .../reviews/{id}/events; never retried once it may have been sent). Our
// review for key already submitted is returned as it is, so a retry
// submits nothing twice; with no review of ours for key, nothing is sent
// (ClassRefused).
func (c *Client) SubmitReview(ctx context.Context, r Repo, number int, key string, p NewReview) (Artifact, error) {
	if err := CheckReview(key, number, p); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("submit review: %w", err))
	}
	return c.settlePendingReview(ctx, r, number, key, p, nil)
}

// settlePendingReview submits our pending review for key, or returns our
// submitted one (or, for a pending review asked for, the pending one).
// refused is the create GitHub refused because this identity holds a
// pending review (nil from SubmitReview): when that review is not ours
// for key, nothing was made and the person must settle theirs.
func (c *Client) settlePendingReview(ctx context.Context, r Repo, number int, key string, p NewReview, refused error) (Artifact, error) {
	did := fmt.Sprintf("review %s#%d", r, number)
	rv, err := c.ourReview(ctx, r, number, key)
	switch {
	case err != nil:
		// Nothing was sent since the refusal, but whether the pending
		// review is ours is unknown. A rerun reads again.
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("%s: %w", did, err))
	case rv == nil && refused == nil:
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("%s: no pending review of this key to submit: create one first", did))
	case rv == nil:
		return Artifact{}, c.createErr(ClassRefused, worded(refused, did, "this identity holds a pending review there that is not this key's (GitHub keeps one per user): submit or delete it, then run again"))
	case rv.State != "PENDING" || p.Event == "":
		return reviewArtifact(number, *rv), nil
	}
	req := &github.PullRequestReviewRequest{Event: github.String(p.Event)}
	if p.Body != "" {
		req.Body = github.String(taskkey.WithMarker(key, p.Body))
	}
	out, class, err := send(ctx, c.newRun(), createOnce, func(ctx context.Context) (*github.PullRequestReview, *github.Response, error) {
		return c.gh.PullRequests.SubmitReview(ctx, r.Owner, r.Name, number, rv.ID, req)
	})
	if er := refusal(err); er != nil && statusOf(er) == http.StatusUnprocessableEntity {
		// A racer may have submitted it first: then it is ours, submitted.
		if again, rerr := c.ourReview(ctx, r, number, key); rerr == nil && again != nil && again.State != "PENDING" {
			return reviewArtifact(number, *again), nil
		}
	}
	if err != nil {
		return Artifact{}, c.createErr(class, reviewRefused(err, r, number, fmt.Sprintf("submit pending review %d on %s#%d", rv.ID, r, number), p.Event))
	}
	return reviewArtifact(number, listedReview(out)), nil
}

// reviewRefused words a refused review: a 404 is the pull request, a 422
// on one's own pull request says what GitHub allows.
func reviewRefused(err error, r Repo, number int, did, event string) error {
	er := refusal(err)
	switch {
	case er == nil:
		return fmt.Errorf("%s: %w", did, err)
	case er.Response.StatusCode == http.StatusNotFound:
		return worded(err, did, fmt.Sprintf("pull request #%d does not exist in %s (or this token cannot see it): check the number and the repository", number, r))
	case er.Response.StatusCode == http.StatusUnprocessableEntity && containsFold(answerText(er), "your own pull request"):
		verb := "approve"
		if event == "REQUEST_CHANGES" {
			verb = "request changes on"
		}
		return worded(err, did, fmt.Sprintf("GitHub lets no one %s their own pull request; nothing was made: comment instead, or review as another identity", verb))
	}
	return worded(err, did, "")
}

func reviewArtifact(number int, rv Review) Artifact {
	return Artifact{Number: number, ID: rv.ID, URL: rv.URL, Author: rv.Author, Body: rv.Body, State: rv.State, Created: rv.Submitted}
}

func init() { listings["reviews"] = listReviews }

// listReviews lists the submitted reviews of each pull request listed,
// one listing each (GitHub has no repository-wide one), each Listed with
// its pull request as Number and its event as State. A pending review is
// its author's draft, one at most: never a duplicate.
func listReviews(ctx context.Context, l *Lists) ([]Listed, error) {
	prs, err := l.Get(ctx, "prs")
	if err != nil {
		return nil, err
	}
	var out []Listed
	for _, pr := range prs {
		rvs, err := l.c.ListReviews(ctx, l.repo, pr.Number)
		if err != nil {
			return nil, err
		}
		for _, rv := range rvs {
			if rv.State != "PENDING" {
				out = append(out, Listed{Number: pr.Number, ID: rv.ID, Body: rv.Body, Author: rv.Author, URL: rv.URL,
					State: rv.State, Created: rv.Submitted, Updated: rv.Submitted})
			}
		}
		l.tell("reviews", len(out))
	}
	return out, nil
}
