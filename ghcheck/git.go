package ghcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/taskkey"
)

// ResolveCommit returns the full SHA of the commit that ref (a branch, tag
// or SHA) names in r, for `branch create --from REF`: GET
// /repos/{o}/{r}/commits/{ref} with the SHA media type. A 404 or 422 means
// there is no such commit.
//
// GitHub API docs: https://docs.github.com/rest/commits/commits#get-a-commit
func (c *Client) ResolveCommit(ctx context.Context, r Repo, ref string) (string, error) {
	if strings.TrimSpace(ref) == "" {
		return "", errors.New("resolve commit: the ref is empty")
	}
	sha, err := get(ctx, c.newRun(), func(ctx context.Context) (string, *github.Response, error) {
		return c.gh.Repositories.GetCommitSHA1(ctx, r.Owner, r.Name, ref, "")
	})
	if st := httpStatus(err); st == http.StatusNotFound || st == http.StatusUnprocessableEntity {
		return "", c.redact(&hintError{msg: fmt.Sprintf("resolve commit %q in %s: no such branch, tag or commit", ref, r), err: err})
	}
	if err != nil {
		return "", c.redact(fmt.Errorf("resolve commit %q in %s: %w", ref, r, err))
	}
	sha = strings.ToLower(strings.TrimSpace(sha))
	if !taskkey.IsCommitSHA(sha) {
		return "", fmt.Errorf("resolve commit %q in %s: GitHub answered %q, not a commit SHA", ref, r, truncate(sha, 80))
	}
	return sha, nil
}

// FindBranch looks for branch name made at commit sha: GET
// /repos/{o}/{r}/git/ref/heads/{name}, an exact and consistent read
// (matching-refs is a prefix match and is never used).
//
// Absent: 404. Found: the branch points at sha, or at a commit that
// descends from it (GET /repos/{o}/{r}/compare/{sha}...{head} answers
// "ahead" or "identical": someone, maybe us, pushed on top). Conflict: it
// points elsewhere; it is someone else's branch. Unknown: a read failed.
//
// GitHub API docs: https://docs.github.com/rest/git/refs#get-a-reference
func (c *Client) FindBranch(ctx context.Context, r Repo, name, sha string) Result {
	if err := CheckBranch(name, sha); err != nil {
		return c.unknown(fmt.Errorf("find branch: %w", err))
	}
	rn := c.newRun()
	ref, missing, err := c.readBranch(ctx, rn, r, name)
	switch {
	case missing:
		return Result{State: Absent}
	case err != nil:
		return c.unknown(err)
	}
	return c.judgeBranch(ctx, rn, r, name, sha, ref)
}

// FindBranchFrom is FindBranch for a branch to start from ref (a branch,
// tag or commit, resolved as ResolveCommit does: "HEAD" is the default
// branch), the ref's resolution and the branch's read made together: one
// round trip, and a comparison more only when the branch exists at
// another commit. sha is the commit ref names ("" when it could not be
// resolved). GitHub's answer that ref names no commit is a conflict (it
// must be fixed, nothing was created); a resolution that failed otherwise
// is unknown.
func (c *Client) FindBranchFrom(ctx context.Context, r Repo, name, ref string) (sha string, res Result) {
	if err := taskkey.CheckBranchName(name); err != nil {
		return "", c.unknown(fmt.Errorf("find branch: %w", err))
	}
	var (
		got             *github.Reference
		missing         bool
		readErr, resErr error
	)
	rn := c.newRun()
	together(
		func() { got, missing, readErr = c.readBranch(ctx, rn, r, name) },
		func() { sha, resErr = c.ResolveCommit(ctx, r, ref) },
	)
	var h *hintError
	switch {
	case errors.As(resErr, &h):
		return "", Result{State: Conflict, Err: resErr}
	case resErr != nil:
		return "", c.unknown(resErr)
	case missing:
		return sha, Result{State: Absent}
	case readErr != nil:
		return sha, c.unknown(readErr)
	}
	return sha, c.judgeBranch(ctx, rn, r, name, sha, got)
}

// judgeBranch says whether branch name, read at ref, was made at commit
// sha: found at sha or at a commit that descends from it, else a conflict.
func (c *Client) judgeBranch(ctx context.Context, rn *run, r Repo, name, sha string, ref *github.Reference) Result {
	at := strings.ToLower(ref.GetObject().GetSHA())
	found := Result{State: Found, Artifact: Artifact{SHA: at, URL: c.branchURL(r, name)}}
	if at == strings.ToLower(sha) {
		return found
	}

	cmp, err := get(ctx, rn, func(ctx context.Context) (*github.CommitsComparison, *github.Response, error) {
		return c.gh.Repositories.CompareCommits(ctx, r.Owner, r.Name, sha, at, &github.ListOptions{PerPage: 1})
	})
	conflict := Result{State: Conflict, Err: fmt.Errorf("branch %s exists at %s, which does not descend from %s; it is someone else's: choose another name or delete it", name, at, sha)}
	if noCommonAncestor(err) {
		// Unrelated histories: GitHub answers 404 "No common ancestor
		// between A and B." instead of a comparison.
		return conflict
	}
	if notFound(err) && c.commitMissing(ctx, rn, r, sha) {
		// GitHub's answer, not a maybe: the start commit is not in the
		// repository, so the branch there cannot have been made from it.
		return Result{State: Conflict, Err: fmt.Errorf("branch %s exists at %s, and the start commit %s does not exist in %s: push that commit first, or give the SHA of a commit the repository has", name, short(at), sha, r)}
	}
	if err != nil {
		return c.unknown(fmt.Errorf("compare branch %s at %s with %s in %s: %w", name, short(at), short(sha), r, err))
	}
	switch cmp.GetStatus() {
	case "ahead", "identical":
		return found
	case "behind":
		// At a commit sha descends from: an older head of the start.
		return Result{State: Conflict, Artifact: found.Artifact, Err: fmt.Errorf("%w: branch %s exists at %s, an earlier commit than %s; it may be an earlier attempt's, from the start's head of then", ErrBranchBehind, name, short(at), short(sha))}
	}
	return conflict
}

// ErrBranchBehind is wrapped by the conflict of a branch found at a commit
// that the start commit descends from (the start moved on since it was
// made); its Artifact is the branch as found.
var ErrBranchBehind = errors.New("branch behind its start")

// readBranch reads branch name exactly: GET
// /repos/{o}/{r}/git/ref/heads/{name}, consistent. missing is GitHub's 404;
// an answer naming another ref (GitHub's prefix fallback) is an error.
func (c *Client) readBranch(ctx context.Context, rn *run, r Repo, name string) (ref *github.Reference, missing bool, err error) {
	ref, err = get(ctx, rn, func(ctx context.Context) (*github.Reference, *github.Response, error) {
		return c.gh.Git.GetRef(ctx, r.Owner, r.Name, "heads/"+name)
	})
	switch {
	case notFound(err):
		return nil, true, nil
	case err != nil:
		return nil, false, fmt.Errorf("read branch %s of %s: %w", name, r, err)
	case ref.GetRef() != "refs/heads/"+name:
		return nil, false, fmt.Errorf("read branch %s of %s: GitHub answered ref %q", name, r, ref.GetRef())
	}
	return ref, false, nil
}

// commitMissing reports whether GitHub answers that commit sha does not
// exist in r: GET /repos/{o}/{r}/commits/{sha} is 422 "No commit found for
// SHA: ...". Any other answer (the commit, a 404 for the repository, an
// error) is false.
func (c *Client) commitMissing(ctx context.Context, rn *run, r Repo, sha string) bool {
	err := rn.read(ctx, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.gh.Repositories.GetCommit(ctx, r.Owner, r.Name, sha, &github.ListOptions{PerPage: 1})
		return resp, err
	})
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return false
	}
	return er.Response.StatusCode == http.StatusUnprocessableEntity && containsFold(er.Message, "no commit found")
}

// noCommonAncestor reports whether err is GitHub's answer to comparing two
// commits with unrelated histories: 404 "No common ancestor between A and B.".
func noCommonAncestor(err error) bool {
	var er *github.ErrorResponse
	return notFound(err) && errors.As(err, &er) && containsFold(er.Message, "no common ancestor")
}

// CreateBranch creates branch name at commit sha: POST
// /repos/{o}/{r}/git/refs. Creating a ref is atomic on GitHub: a second
// create answers 422 "Reference already exists" (with no errors array),
// ClassExists; find it and check where it points.
//
// GitHub API docs: https://docs.github.com/rest/git/refs#create-a-reference
func (c *Client) CreateBranch(ctx context.Context, r Repo, name, sha string) (Artifact, error) {
	if err := CheckBranch(name, sha); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("create branch: %w", err))
	}
	ref, class, err := send(ctx, c.newRun(), createOnce, func(ctx context.Context) (*github.Reference, *github.Response, error) {
		return c.gh.Git.CreateRef(ctx, r.Owner, r.Name, &github.Reference{
			Ref:    github.String("refs/heads/" + name),
			Object: &github.GitObject{SHA: github.String(sha)},
		})
	})
	if err != nil {
		return Artifact{}, c.createErr(class, issueRefused(err, r, 0, fmt.Sprintf("create branch %s at %s in %s", name, short(sha), r)))
	}
	at := ref.GetObject().GetSHA()
	if at == "" {
		at = sha
	}
	return Artifact{SHA: strings.ToLower(at), URL: c.branchURL(r, name)}, nil
}

// CheckBranch refuses a branch name or commit FindBranch and CreateBranch
// would refuse before sending anything: an invalid branch name, or a
// commit that is not 40 lower-case hex digits.
func CheckBranch(name, sha string) error {
	if err := taskkey.CheckBranchName(name); err != nil {
		return err
	}
	if !taskkey.IsCommitSHA(sha) {
		return &effect.InvalidError{Field: "sha", Problem: fmt.Sprintf("%q is not a commit SHA", sha), Want: "the 40 hex digits of a commit"}
	}
	return nil
}

// branchURL is the web page of a branch, or "" when the web root is not
// known (GitHub returns none for a ref).
func (c *Client) branchURL(r Repo, name string) string {
	if c.web == "" {
		return ""
	}
	return c.web + url.PathEscape(r.Owner) + "/" + url.PathEscape(r.Name) + "/tree/" + escapeSegments(name)
}

func escapeSegments(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

func short(sha string) string { return truncate(sha, 12) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
