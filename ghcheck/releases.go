package ghcheck

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/taskkey"
)

// NewRelease is what CreateRelease makes, by the fields of POST
// /repos/{o}/{r}/releases: an empty Target is the default branch, an empty
// Name shows the tag.
type NewRelease struct {
	Tag, Target, Name, Body string
	Draft, Prerelease       bool
}

// MaxReleaseBody is GitHub's limit on a release's notes.
const MaxReleaseBody = 125000

// CheckRelease refuses what FindRelease and CreateRelease would refuse
// before sending anything for key: a tag or target that is no ref name
// under git check-ref-format's rules, notes too long once the marker is
// added.
func CheckRelease(key, tag, target, body string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if err := taskkey.CheckTagName(tag); err != nil {
		return err
	}
	if target != "" {
		if err := taskkey.CheckBranchName(target); err != nil {
			return fmt.Errorf("invalid target %q: want a branch name or a commit SHA", target)
		}
	}
	if n := len([]rune(taskkey.WithMarker(key, body))); n > MaxReleaseBody {
		return fmt.Errorf("release notes are %d characters with ghonce's marker, over GitHub's %d: shorten them by %d", n, MaxReleaseBody, n-MaxReleaseBody)
	}
	return nil
}

// FindRelease looks for our release for key, tagged tag. GitHub keeps one
// published release per tag but any number of drafts, and GET
// /repos/{o}/{r}/releases/tags/{tag} answers the published one only; so
// it reads that and, in the same round trip, GET /repos/{o}/{r}/releases,
// every page (drafts are listed to those who can push, which making a
// release needs). Both are consistent right after a write. A release
// counts only if its author is ours and its notes' first line is key's
// marker (its tag may have been edited since: the marker names the act).
//
// Found: the oldest such release, draft or published. Conflict: none, and
// the tag has a published release that is not ours (a create would be
// refused, and a draft could never be published). Absent: neither, or
// the repository does not exist for this token (404; the create then fails
// too). Unknown: a read failed.
//
// GitHub API docs: https://docs.github.com/rest/releases/releases#list-releases
func (c *Client) FindRelease(ctx context.Context, r Repo, key, tag string) Result {
	if err := CheckRelease(key, tag, "", ""); err != nil {
		return c.unknown(fmt.Errorf("find release: %w", err))
	}
	var ours func(string) bool
	var published *github.RepositoryRelease
	var all []*github.RepositoryRelease
	var oursErr, tagErr, listErr error
	together(
		func() { ours, oursErr = c.oursFunc(ctx) },
		func() {
			tagErr = c.newRun().read(ctx, func(ctx context.Context) (resp *github.Response, err error) {
				published, resp, err = c.gh.Repositories.GetReleaseByTag(ctx, r.Owner, r.Name, escapeSegments(tag))
				return resp, err
			})
		},
		func() {
			all, listErr = every(ctx, c.newRun(), func(ctx context.Context, opts github.ListOptions) ([]*github.RepositoryRelease, *github.Response, error) {
				return c.gh.Repositories.ListReleases(ctx, r.Owner, r.Name, &opts)
			})
		},
	)
	switch {
	case oursErr != nil:
		return c.unknown(fmt.Errorf("find release: %w", oursErr))
	case notFound(listErr):
		return Result{State: Absent}
	case listErr != nil:
		return c.unknown(fmt.Errorf("list releases of %s: %w", r, listErr))
	case tagErr != nil && !notFound(tagErr):
		return c.unknown(fmt.Errorf("get release %s of %s: %w", tag, r, tagErr))
	}
	switch best := oldestOurs(append(all, published), (*github.RepositoryRelease).GetAuthor, ours, key); {
	case best != nil:
		return Result{State: Found, Artifact: releaseArtifact(best)}
	case published != nil:
		by := published.GetAuthor().GetLogin()
		return Result{State: Conflict, Err: fmt.Errorf("tag %s already has a release by %s (%s), not this key's: %s", tag, by, published.GetHTMLURL(), onePerTag)}
	}
	return Result{State: Absent}
}

// CreateRelease makes the release p, its notes' first line key's marker.
//
// POST /repos/{o}/{r}/releases is not idempotent for drafts (GitHub keeps
// a tag unique among published releases only) and is never retried once it
// may have been sent. A 422 already_exists on tag_name (the tag has a
// published release) is ClassExists: the engine looks, and adopts it only
// if it is ours. What CheckRelease refuses is ClassRefused before sending.
//
// GitHub API docs: https://docs.github.com/rest/releases/releases#create-a-release
func (c *Client) CreateRelease(ctx context.Context, r Repo, key string, p NewRelease) (Artifact, error) {
	if err := CheckRelease(key, p.Tag, p.Target, p.Body); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("create release: %w", err))
	}
	req := &github.RepositoryRelease{
		TagName: github.String(p.Tag),
		Body:    github.String(taskkey.WithMarker(key, p.Body)),
		Draft:   github.Bool(p.Draft), Prerelease: github.Bool(p.Prerelease),
	}
	if p.Target != "" {
		req.TargetCommitish = github.String(p.Target)
	}
	if p.Name != "" {
		req.Name = github.String(p.Name)
	}
	var rl *github.RepositoryRelease
	class, err := c.newRun().create(ctx, func(ctx context.Context) (resp *github.Response, err error) {
		rl, resp, err = c.gh.Repositories.CreateRelease(ctx, r.Owner, r.Name, req)
		return resp, err
	})
	if err != nil {
		return Artifact{}, c.createErr(class, releaseRefused(err, r, p))
	}
	return releaseArtifact(rl), nil
}

// releaseRefused words a refused create of release p.
func releaseRefused(err error, r Repo, p NewRelease) error {
	did := fmt.Sprintf("create release %s in %s", p.Tag, r)
	er := refusal(err)
	switch {
	case er == nil:
		return fmt.Errorf("%s: %w", did, err)
	case er.Response.StatusCode == http.StatusNotFound:
		return worded(err, did, repoNotFoundHint(r))
	case er.Response.StatusCode == http.StatusUnprocessableEntity && alreadyExists(er):
		return worded(err, did, onePerTag)
	case er.Response.StatusCode == http.StatusUnprocessableEntity && fieldInvalid(er, "target_commitish"):
		return worded(err, did, fmt.Sprintf("target %q is no branch or commit of %s: push it first, or name another", p.Target, r))
	}
	return worded(err, did, "")
}

// onePerTag is what to do about a tag whose published release is not ours.
const onePerTag = "GitHub allows one published release per tag; choose another tag, or delete that release"

func releaseArtifact(rl *github.RepositoryRelease) Artifact {
	state := "published"
	if rl.GetDraft() {
		state = "draft"
	}
	return Artifact{ID: rl.GetID(), URL: rl.GetHTMLURL(), Author: rl.GetAuthor().GetLogin(), State: state,
		Title: rl.GetName(), Body: rl.GetBody(), Created: rl.GetCreatedAt().Time}
}

func init() { listings["releases"] = listReleases }

// listReleases lists the repository's releases, drafts included (to a
// token that can push), every page, whatever since says (the listing has
// no such filter): GET /repos/{o}/{r}/releases. A release's tag is its
// Listed.Head, its title Title, and its State "draft" or "published".
//
// GitHub API docs: https://docs.github.com/rest/releases/releases#list-releases
func listReleases(ctx context.Context, l *Lists) ([]Listed, error) {
	var out []Listed
	err := l.c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		rs, resp, err := l.c.gh.Repositories.ListReleases(ctx, l.repo.Owner, l.repo.Name, &github.ListOptions{Page: page, PerPage: 100})
		for _, rl := range rs {
			a := releaseArtifact(rl)
			out = append(out, Listed{ID: a.ID, Title: a.Title, Body: a.Body, Author: a.Author, URL: a.URL, State: a.State,
				Created: a.Created, Head: rl.GetTagName()})
		}
		return resp, err
	})
	if err != nil {
		return nil, fmt.Errorf("list releases of %s: %w", l.repo, err)
	}
	return out, nil
}
