package fakegithub

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"
)

func init() {
	handle(map[string]repoEndpoint{
		"GET /releases":               (*Server).listReleases,
		"POST /releases":              (*Server).createRelease,
		"GET /releases/tags/{tag...}": (*Server).getReleaseByTag,
		"GET /releases/{id}":          (*Server).getRelease,
	})
}

// KindRelease: a release was created.
const KindRelease CommitKind = "release"

// maxReleaseBody is GitHub's limit on a release's notes.
const maxReleaseBody = 125000

type release struct {
	id                 int64
	tag, target        string
	name, body, author string
	draft, prerelease  bool
	created, published time.Time
}

// releaseStore holds a repository's releases, oldest first.
type releaseStore struct{ all []*release }

// releaseIDs numbers releases.
const releaseIDs idSeq = 180_000_000

// Release is a release as Server.Releases reports it.
type Release struct {
	ID                      int64
	Tag, Target, Name, Body string
	Author                  string
	Draft, Prerelease       bool
	CreatedAt               time.Time
}

// Releases returns the repository's releases, drafts included, oldest first.
func (s *Server) Releases(owner, name string) []Release {
	return inRepo(s, owner, name, func(rp *repo) (out []Release) {
		for _, rl := range storeOf[releaseStore](rp).all {
			out = append(out, Release{ID: rl.id, Tag: rl.tag, Target: rl.target, Name: rl.name, Body: rl.body,
				Author: rl.author, Draft: rl.draft, Prerelease: rl.prerelease, CreatedAt: rl.created})
		}
		return out
	})
}

// publishedRelease is the published release of tag: GitHub keeps at most
// one; drafts may share a tag with it and with each other.
func (rp *repo) publishedRelease(tag string) *release {
	for _, rl := range storeOf[releaseStore](rp).all {
		if !rl.draft && rl.tag == tag {
			return rl
		}
	}
	return nil
}

// createRelease serves POST /repos/{owner}/{repo}/releases. It refuses
// (422) a missing or malformed tag_name, notes over 125,000 characters, a
// tag that already has a published release (code already_exists, field
// tag_name, whether the new one is a draft or not) and, for a published
// release whose tag does not exist yet, a target_commitish that names no
// branch or commit. Publishing makes the tag at the target (the default
// branch when none is given); a draft makes no tag.
func (s *Server) createRelease(c *call, rp *repo) *reply {
	var in struct {
		TagName         *string `json:"tag_name"`
		TargetCommitish string  `json:"target_commitish"`
		Name            string  `json:"name"`
		Body            string  `json:"body"`
		Draft           bool    `json:"draft"`
		Prerelease      bool    `json:"prerelease"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	invalid := func(field, code string) *reply {
		return validationFailed(apiError{Resource: "Release", Code: code, Field: field})
	}
	if in.TagName == nil || *in.TagName == "" {
		return invalid("tag_name", "missing_field")
	}
	tag := *in.TagName
	if !validRefName("refs/tags/" + tag) {
		return invalid("tag_name", "invalid")
	}
	if len([]rune(in.Body)) > maxReleaseBody {
		return validationFailed(apiError{Resource: "Release", Code: "custom", Field: "body", Message: fmt.Sprintf("body is too long (maximum is %d characters)", maxReleaseBody)})
	}
	if rp.publishedRelease(tag) != nil {
		return invalid("tag_name", "already_exists")
	}
	target := in.TargetCommitish
	if target == "" {
		target = rp.defaultBranch
	}
	_, tagged := rp.refs["refs/tags/"+tag]
	if !in.Draft && !tagged {
		cm, ok := rp.resolve(target)
		if !ok {
			return invalid("target_commitish", "invalid")
		}
		rp.refs["refs/tags/"+tag] = cm.sha
	}
	now := s.now()
	rl := &release{id: s.nextID(releaseIDs), tag: tag, target: target, name: in.Name, body: in.Body,
		author: s.userFor(c.login).login, draft: in.Draft, prerelease: in.Prerelease, created: now}
	if !in.Draft {
		rl.published = now
	}
	st := storeOf[releaseStore](rp)
	st.all = append(st.all, rl)
	return created(s.api(fmt.Sprintf("%s/releases/%d", rp.path(), rl.id)), s.releaseJSON(rp, rl),
		&Commit{Kind: KindRelease, ID: rl.id, Ref: "refs/tags/" + tag})
}

// listReleases serves GET /repos/{owner}/{repo}/releases, newest first,
// drafts included (the fake has no permissions: every user sees them, as
// one who can push does on GitHub).
func (s *Server) listReleases(c *call, rp *repo) *reply {
	list := slices.Clone(storeOf[releaseStore](rp).all)
	slices.Reverse(list)
	return pageReplyOf(s, c, repoLinkPath(c, rp), len(list), func(i int) *releaseJSON { return s.releaseJSON(rp, list[i]) })
}

// getReleaseByTag serves GET /repos/{owner}/{repo}/releases/tags/{tag}:
// the published release only; a tag that only drafts carry is 404.
func (s *Server) getReleaseByTag(c *call, rp *repo) *reply {
	rl := rp.publishedRelease(c.params["tag"])
	if rl == nil {
		return notFound()
	}
	return jsonReply(http.StatusOK, s.releaseJSON(rp, rl))
}

// getRelease serves GET /repos/{owner}/{repo}/releases/{id}.
func (s *Server) getRelease(c *call, rp *repo) *reply {
	id, ok := intParam(c, "id")
	if !ok {
		return notFound()
	}
	for _, rl := range storeOf[releaseStore](rp).all {
		if rl.id == id {
			return jsonReply(http.StatusOK, s.releaseJSON(rp, rl))
		}
	}
	return notFound()
}

type releaseJSON struct {
	URL             string    `json:"url"`
	HTMLURL         string    `json:"html_url"`
	AssetsURL       string    `json:"assets_url"`
	UploadURL       string    `json:"upload_url"`
	TarballURL      *string   `json:"tarball_url"`
	ZipballURL      *string   `json:"zipball_url"`
	ID              int64     `json:"id"`
	NodeID          string    `json:"node_id"`
	TagName         string    `json:"tag_name"`
	TargetCommitish string    `json:"target_commitish"`
	Name            *string   `json:"name"`
	Body            *string   `json:"body"`
	Draft           bool      `json:"draft"`
	Prerelease      bool      `json:"prerelease"`
	CreatedAt       string    `json:"created_at"`
	PublishedAt     *string   `json:"published_at"`
	Author          *userJSON `json:"author"`
	Assets          []any     `json:"assets"`
}

// releaseJSON is rl as GitHub shows it (octokit's release-assets
// fixture): a draft's page is under an "untagged-" name until published.
func (s *Server) releaseJSON(rp *repo, rl *release) *releaseJSON {
	api := s.api(fmt.Sprintf("%s/releases/%d", rp.path(), rl.id))
	tagPath := url.PathEscape(rl.tag)
	j := &releaseJSON{
		URL: api, AssetsURL: api + "/assets", UploadURL: api + "/assets{?name,label}",
		HTMLURL: s.web(fmt.Sprintf("/%s/%s/releases/tag/%s", rp.owner, rp.name, tagPath)),
		ID:      rl.id, NodeID: nodeID("Release", rl.id), TagName: rl.tag, TargetCommitish: rl.target,
		Draft: rl.draft, Prerelease: rl.prerelease, CreatedAt: stamp(rl.created), PublishedAt: tsOrNil(rl.published),
		Author: s.userJSON(rl.author), Assets: []any{},
	}
	if rl.name != "" {
		j.Name = &rl.name
	}
	if rl.body != "" {
		j.Body = &rl.body
	}
	if rl.draft {
		j.HTMLURL = s.web(fmt.Sprintf("/%s/%s/releases/tag/untagged-%x", rp.owner, rp.name, rl.id))
	} else {
		tar, zip := s.api(rp.path()+"/tarball/"+tagPath), s.api(rp.path()+"/zipball/"+tagPath)
		j.TarballURL, j.ZipballURL = &tar, &zip
	}
	return j
}
