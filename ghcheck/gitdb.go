package ghcheck

// The git database requests the repository ledger (ledger/github) is made
// of. Each says which way it failed as a Class, like the creates of
// artifacts: ClassExists for a ref that exists, ClassMaybe for an answer
// that may have come after the write, ClassRefused for GitHub's "no".

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
)

// EmptyTree is git's empty tree, which every repository has: the tree of
// every commit the repository ledger makes.
const EmptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// GitCommit is a commit object as the git database API shows it.
type GitCommit struct {
	SHA     string
	Message string
	Parents []string
	// Author is the author's name (GitHub uses the login of the token
	// that made the commit); Date is the committer's date, on GitHub's
	// clock when the request named none.
	Author string
	Date   time.Time
}

// ErrNotFastForward is GitHub's 422 "Update is not a fast forward": the ref
// moved since it was read.
var ErrNotFastForward = errors.New("update is not a fast forward")

// answerDate is the Date header of GitHub's answer, zero when there is none.
func answerDate(resp *github.Response, err error) time.Time {
	var h http.Header
	switch {
	case resp != nil && resp.Response != nil:
		h = resp.Header
	default:
		var er *github.ErrorResponse
		if errors.As(err, &er) && er.Response != nil {
			h = er.Response.Header
		}
	}
	if h == nil {
		return time.Time{}
	}
	d, perr := http.ParseTime(h.Get("Date"))
	if perr != nil {
		return time.Time{}
	}
	return d.UTC()
}

func gitCommitOf(c *github.Commit) GitCommit {
	g := GitCommit{SHA: strings.ToLower(c.GetSHA()), Message: c.GetMessage(), Author: c.GetAuthor().GetName()}
	if d := c.GetCommitter().GetDate(); !d.IsZero() {
		g.Date = d.UTC()
	} else {
		g.Date = c.GetAuthor().GetDate().UTC()
	}
	for _, p := range c.Parents {
		g.Parents = append(g.Parents, strings.ToLower(p.GetSHA()))
	}
	return g
}

// CreateGitCommit makes a commit object on the empty tree with message
// and parents: POST /repos/{o}/{r}/git/commits, author and committer left
// to GitHub (the token's identity, dated by GitHub's clock). No ref points
// at it yet; one that none ever does is garbage in the repository, so a
// retry after a maybe costs nothing but another object.
//
// GitHub API docs: https://docs.github.com/rest/git/commits#create-a-commit
func (c *Client) CreateGitCommit(ctx context.Context, r Repo, message string, parents []string) (GitCommit, error) {
	in := &github.Commit{Message: github.String(message), Tree: &github.Tree{SHA: github.String(EmptyTree)}}
	for _, p := range parents {
		in.Parents = append(in.Parents, &github.Commit{SHA: github.String(p)})
	}
	out, cl, err := send(ctx, c.newRun(), createOnce, func(ctx context.Context) (*github.Commit, *github.Response, error) {
		return c.gh.Git.CreateCommit(ctx, r.Owner, r.Name, in, nil)
	})
	if err != nil {
		return GitCommit{}, c.createErr(cl, fmt.Errorf("create a commit object in %s: %w", r, err))
	}
	return gitCommitOf(out), nil
}

// GetGitCommit reads commit sha: GET /repos/{o}/{r}/git/commits/{sha}. A
// commit never changes, so a caller may keep what it read.
//
// GitHub API docs: https://docs.github.com/rest/git/commits#get-a-commit-object
func (c *Client) GetGitCommit(ctx context.Context, r Repo, sha string) (GitCommit, error) {
	out, err := get(ctx, c.newRun(), func(ctx context.Context) (*github.Commit, *github.Response, error) {
		return c.gh.Git.GetCommit(ctx, r.Owner, r.Name, sha)
	})
	if err != nil {
		return GitCommit{}, c.redact(fmt.Errorf("read commit %s of %s: %w", short(sha), r, err))
	}
	return gitCommitOf(out), nil
}

// ReadRef reads ref ("refs/ghonce/...") exactly: GET
// /repos/{o}/{r}/git/ref/{ref without "refs/"}, a consistent read. sha is
// "" when GitHub answers 404. date is the Date of GitHub's answer.
//
// GitHub API docs: https://docs.github.com/rest/git/refs#get-a-reference
func (c *Client) ReadRef(ctx context.Context, r Repo, ref string) (sha string, date time.Time, err error) {
	var out *github.Reference
	err = c.newRun().read(ctx, func(ctx context.Context) (resp *github.Response, err error) {
		out, resp, err = c.gh.Git.GetRef(ctx, r.Owner, r.Name, strings.TrimPrefix(ref, "refs/"))
		date = answerDate(resp, err)
		return resp, err
	})
	switch {
	case notFound(err):
		return "", date, nil
	case err != nil:
		return "", date, c.redact(fmt.Errorf("read %s of %s: %w", ref, r, err))
	case out.GetRef() != ref:
		return "", date, fmt.Errorf("read %s of %s: GitHub answered ref %q", ref, r, out.GetRef())
	}
	return strings.ToLower(out.GetObject().GetSHA()), date, nil
}

// RefAt is one ref and the object it points at.
type RefAt struct{ Ref, SHA string }

// MatchingRefs lists the refs whose name starts with prefix
// ("refs/ghonce/"): GET /repos/{o}/{r}/git/matching-refs/{prefix}, which
// answers every match at once (it documents no pages).
//
// GitHub API docs: https://docs.github.com/rest/git/refs#list-matching-references
func (c *Client) MatchingRefs(ctx context.Context, r Repo, prefix string) ([]RefAt, error) {
	out, err := get(ctx, c.newRun(), func(ctx context.Context) ([]*github.Reference, *github.Response, error) {
		return c.gh.Git.ListMatchingRefs(ctx, r.Owner, r.Name, &github.ReferenceListOptions{Ref: strings.TrimPrefix(prefix, "refs/")})
	})
	if err != nil {
		return nil, c.redact(fmt.Errorf("list %s* of %s: %w", prefix, r, err))
	}
	refs := make([]RefAt, 0, len(out))
	for _, ref := range out {
		if strings.HasPrefix(ref.GetRef(), prefix) {
			refs = append(refs, RefAt{Ref: ref.GetRef(), SHA: strings.ToLower(ref.GetObject().GetSHA())})
		}
	}
	return refs, nil
}

// CreateRefAt creates ref at sha: POST /repos/{o}/{r}/git/refs, atomic
// on GitHub. A ref that exists is ClassExists; any other 422 is
// ClassRefused with GitHub's words.
//
// GitHub API docs: https://docs.github.com/rest/git/refs#create-a-reference
func (c *Client) CreateRefAt(ctx context.Context, r Repo, ref, sha string) error {
	in := &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(sha)}}
	cl, err := c.newRun().create(ctx, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.gh.Git.CreateRef(ctx, r.Owner, r.Name, in)
		return resp, err
	})
	if err != nil {
		return c.createErr(cl, fmt.Errorf("create %s in %s: %w", ref, r, err))
	}
	return nil
}

// MoveRef moves ref to sha as a fast forward only: PATCH
// /repos/{o}/{r}/git/refs/{ref without "refs/"} with force false. When
// the ref moved since the caller read it, GitHub answers 422 "Update is
// not a fast forward": the error wraps ErrNotFastForward (ClassRefused).
//
// GitHub API docs: https://docs.github.com/rest/git/refs#update-a-reference
func (c *Client) MoveRef(ctx context.Context, r Repo, ref, sha string) error {
	in := &github.Reference{Ref: github.String(strings.TrimPrefix(ref, "refs/")), Object: &github.GitObject{SHA: github.String(sha)}}
	cl, err := c.newRun().create(ctx, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.gh.Git.UpdateRef(ctx, r.Owner, r.Name, in, false)
		return resp, err
	})
	if err == nil {
		return nil
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) && statusOf(er) == http.StatusUnprocessableEntity && containsFold(er.Message, "not a fast forward") {
		err = fmt.Errorf("%w: %w", ErrNotFastForward, err)
	}
	return c.createErr(cl, fmt.Errorf("move %s in %s to %s: %w", ref, r, short(sha), err))
}

// DeleteRefNamed deletes ref: DELETE /repos/{o}/{r}/git/refs/{ref without
// "refs/"}. One that is gone already (422 "Reference does not exist", or
// 404) is no error.
//
// GitHub API docs: https://docs.github.com/rest/git/refs#delete-a-reference
func (c *Client) DeleteRefNamed(ctx context.Context, r Repo, ref string) error {
	cl, err := c.newRun().create(ctx, func(ctx context.Context) (*github.Response, error) {
		return c.gh.Git.DeleteRef(ctx, r.Owner, r.Name, strings.TrimPrefix(ref, "refs/"))
	})
	var er *github.ErrorResponse
	if err != nil && errors.As(err, &er) && (statusOf(er) == http.StatusNotFound || statusOf(er) == http.StatusUnprocessableEntity && containsFold(er.Message, "does not exist")) {
		return nil
	}
	if err != nil {
		return c.createErr(cl, fmt.Errorf("delete %s in %s: %w", ref, r, err))
	}
	return nil
}

// GitHubNow reads GitHub's clock: the Date of its answer to GET
// /repos/{o}/{r} (whole seconds).
//
// GitHub API docs: https://docs.github.com/rest/repos/repos#get-a-repository
func (c *Client) GitHubNow(ctx context.Context, r Repo) (time.Time, error) {
	var date time.Time
	err := c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.gh.Repositories.Get(ctx, r.Owner, r.Name)
		date = answerDate(resp, err)
		return resp, err
	})
	if err != nil {
		return time.Time{}, c.redact(fmt.Errorf("read the clock of %s: %w", r, err))
	}
	if date.IsZero() {
		return time.Time{}, fmt.Errorf("read the clock of %s: GitHub's answer had no Date", r)
	}
	return date, nil
}

// GitHubClock reads GitHub's clock where no repository is named yet: the
// Date of its answer to GET /rate_limit, which every token may read and
// which spends none of its limit.
func (c *Client) GitHubClock(ctx context.Context) (time.Time, error) {
	var date time.Time
	err := c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.gh.RateLimit.Get(ctx)
		date = answerDate(resp, err)
		return resp, err
	})
	if err != nil {
		return time.Time{}, c.redact(fmt.Errorf("read GitHub's clock: %w", err))
	}
	if date.IsZero() {
		return time.Time{}, errors.New("read GitHub's clock: its answer had no Date")
	}
	return date, nil
}
