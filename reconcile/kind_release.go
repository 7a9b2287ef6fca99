package reconcile

import (
	"context"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
)

// Release makes a release. GitHub keeps one published release per tag
// but any number of drafts: the key's marker, first in the notes, tags it,
// and the tag is the key's target. The tag names the act, so notes or a
// title reworded under a done key are that release again, never another
// (there could be no other published one).
type Release struct {
	TagName         string `json:"tag_name"`
	TargetCommitish string `json:"target_commitish,omitempty"`
	Name            string `json:"name,omitempty"`
	Body            string `json:"body"`
	Draft           bool   `json:"draft,omitempty"`
	Prerelease      bool   `json:"prerelease,omitempty"`
}

func init() { register[Release]() }

func (Release) Kind() string { return "release" }

// Face: see Face. The verbs are gh's (`gh release create TAG`, its flags);
// github-mcp-server has no tool that makes a release: the proxy's generic
// guard covers its upstream ones.
func (Release) Face() Face {
	return Face{
		Write:    "POST repos/{owner}/{repo}/releases",
		Refuses:  []string{"discussion_category_name", "generate_release_notes", "make_latest"},
		ReadBack: []string{"repos/{owner}/{repo}/releases/{id}"},
		CLI:      []string{"release create"}, Gh: []string{"release create"},
		Does: "Create a release", Permission: "`contents: write`",
		Audit: &effect.Audit{Rank: 5, Listing: "releases", Ref: "release {name} (id {id})", Same: []string{"tag", "title", "body"},
			Detail: "the same author, tag, title and normalised notes",
			Leave:  "ghonce does not delete releases: delete it on GitHub if it is not needed"},
		Example: `{"tag_name": "v1.0.0", "name": "v1.0.0", "body": "The first release."}`,
		Fields: []effect.Field{
			{Name: "tag_name", Arg: "TAG", Input: "tag", Help: "the release's tag", Required: true},
			{Name: "name", Flag: "title", Short: "t", Help: "release title"},
			{Name: "body", Flag: "notes", Short: "n", Input: "body", Help: "release notes", File: true, FileShort: "F"},
			{Name: "target_commitish", Flag: "target", Help: "branch or commit the tag is made at (default: the default branch)"},
			{Name: "draft", Short: "d", Help: "save it as a draft"},
			{Name: "prerelease", Short: "p", Help: "mark it as a prerelease"},
		},
	}
}

// DefaultStep: see DefaultStepper.
func (Release) DefaultStep() string { return "release-create" }
func (r Release) Target() string    { return r.TagName }

func (Release) aim(tag string) (Spec, error) {
	r := Release{TagName: tag}
	return r, r.checkTag()
}

func (r Release) checkTag() error {
	if r.TagName == "" {
		return empty("tag_name", "the release's tag, e.g. v1.2.0")
	}
	if err := taskkey.CheckTagName(r.TagName); err != nil {
		return &InvalidError{Field: "tag_name", Err: err}
	}
	return nil
}

func (r Release) Validate(key string) error {
	if err := r.checkTag(); err != nil {
		return err
	}
	if err := ghcheck.CheckRelease(key, r.TagName, r.TargetCommitish, ""); err != nil {
		return &InvalidError{Field: "target_commitish", Err: err}
	}
	if err := ghcheck.CheckRelease(key, r.TagName, "", r.Body); err != nil {
		return &InvalidError{Field: "body", Err: err}
	}
	return nil
}

// releaseAPI is what a release asks of GitHub (*ghcheck.Client).
type releaseAPI interface {
	FindRelease(ctx context.Context, r ghcheck.Repo, key, tag string) effect.Result
	CreateRelease(ctx context.Context, r ghcheck.Repo, key string, p ghcheck.NewRelease) (effect.Artifact, error)
}

var _ releaseAPI = (*ghcheck.Client)(nil)

func (r Release) Find(ctx context.Context, env *Env, key string) effect.Result {
	return look(env, func(gh releaseAPI) effect.Result { return gh.FindRelease(ctx, env.Repo, key, r.TagName) })
}

func (r Release) Create(ctx context.Context, env *Env, key string) (effect.Artifact, error) {
	return send(env, func(gh releaseAPI) (effect.Artifact, error) {
		return gh.CreateRelease(ctx, env.Repo, key, ghcheck.NewRelease{Tag: r.TagName, Target: r.TargetCommitish,
			Name: r.Name, Body: r.Body, Draft: r.Draft, Prerelease: r.Prerelease})
	})
}

// actIsTarget: see sameAct.
func (Release) actIsTarget() {}

var (
	_ Spec        = Release{}
	_ AsFounder   = Release{}
	_ targetIsAct = Release{}
)

// AsFound is the release as GitHub shows it: its title, notes (less the
// marker) and whether it is a draft; the target and prerelease flag are
// this run's.
func (r Release) AsFound(key, _ string, art effect.Artifact) (Spec, bool) {
	if art.State == "" {
		return nil, false
	}
	f := r
	f.Name, f.Body, f.Draft = art.Title, withoutMarker(key, art.Body), art.State == "draft"
	return f, true
}
