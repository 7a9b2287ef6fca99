package fakegithub

import (
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
)

func init() {
	handle(map[string]repoEndpoint{
		"GET /contents/{path...}": (*Server).getContents,
		"PUT /contents/{path...}": (*Server).putContents,
	})
}

type contentLinksJSON struct {
	Self string `json:"self"`
	Git  string `json:"git"`
	HTML string `json:"html"`
}

type contentJSON struct {
	Type        string           `json:"type"`
	Encoding    string           `json:"encoding,omitempty"`
	Size        int              `json:"size"`
	Name        string           `json:"name"`
	Path        string           `json:"path"`
	Content     *string          `json:"content,omitempty"`
	SHA         string           `json:"sha"`
	URL         string           `json:"url"`
	GitURL      string           `json:"git_url"`
	HTMLURL     string           `json:"html_url"`
	DownloadURL *string          `json:"download_url"`
	Links       contentLinksJSON `json:"_links"`
}

// contentEntry describes a file (content != nil) or a directory of a
// commit's tree as the contents API shows it; ref is what the URLs name.
func (s *Server) contentEntry(rp *repo, c *commit, p, ref string, withContent bool) contentJSON {
	self := s.api(rp.path() + "/contents/" + escapeRef(p) + "?ref=" + url.QueryEscape(ref))
	if b, ok := c.files[p]; ok {
		sha := blobSHA(b)
		git := s.api(rp.path() + "/git/blobs/" + sha)
		html := s.web("/" + rp.owner + "/" + rp.name + "/blob/" + escapeRef(ref) + "/" + escapeRef(p))
		download := s.web("/" + rp.owner + "/" + rp.name + "/raw/" + escapeRef(ref) + "/" + escapeRef(p))
		e := contentJSON{
			Type: "file", Size: len(b), Name: path.Base(p), Path: p, SHA: sha,
			URL: self, GitURL: git, HTMLURL: html, DownloadURL: &download,
			Links: contentLinksJSON{Self: self, Git: git, HTML: html},
		}
		if withContent {
			enc := wrapBase64(b)
			e.Encoding, e.Content = "base64", &enc
		}
		return e
	}
	sha := treeSHA(c.files, p)
	git := s.api(rp.path() + "/git/trees/" + sha)
	html := s.web("/" + rp.owner + "/" + rp.name + "/tree/" + escapeRef(ref) + "/" + escapeRef(p))
	return contentJSON{
		Type: "dir", Name: path.Base(p), Path: p, SHA: sha,
		URL: self, GitURL: git, HTMLURL: html,
		Links: contentLinksJSON{Self: self, Git: git, HTML: html},
	}
}

// wrapBase64 encodes b the way the contents API does: base64 in lines of 60
// characters, each ending in "\n".
func wrapBase64(b []byte) string {
	enc := base64.StdEncoding.EncodeToString(b)
	var sb strings.Builder
	for len(enc) > 60 {
		sb.WriteString(enc[:60])
		sb.WriteByte('\n')
		enc = enc[60:]
	}
	sb.WriteString(enc)
	sb.WriteByte('\n')
	return sb.String()
}

// dirEntries lists the immediate children of directory dir ("" for the
// root); ok is false when nothing lives under it.
func dirEntries(files map[string][]byte, dir string) ([]string, bool) {
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
	}
	seen := map[string]bool{}
	for p := range files {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		first, _, _ := strings.Cut(rest, "/")
		seen[prefix+first] = true
	}
	return slices.Sorted(maps.Keys(seen)), len(seen) > 0 || dir == ""
}

// getContents serves GET /repos/{owner}/{repo}/contents/{path}?ref=: a
// file as {type:"file", sha: its git blob sha, content (base64),
// encoding}, a directory as an array of entries; 404 when absent. With
// Accept: application/vnd.github.raw (or .v3.raw) a file comes back raw.
func (s *Server) getContents(c *call, rp *repo) *reply {
	p := strings.Trim(c.params["path"], "/")
	ref := c.r.URL.Query().Get("ref")
	if ref == "" {
		ref = rp.defaultBranch
	}
	cm, ok := rp.resolve(ref)
	if !ok {
		return errorReply(http.StatusNotFound, "No commit found for the ref "+ref)
	}
	if b, ok := cm.files[p]; ok {
		if strings.Contains(c.r.Header.Get("Accept"), ".raw") {
			return &reply{status: http.StatusOK, body: b, raw: true, header: http.Header{"Content-Type": {"text/plain; charset=utf-8"}}}
		}
		return jsonReply(http.StatusOK, s.contentEntry(rp, cm, p, ref, true))
	}
	children, ok := dirEntries(cm.files, p)
	if !ok {
		return notFound()
	}
	items := make([]contentJSON, 0, len(children))
	for _, child := range children {
		items = append(items, s.contentEntry(rp, cm, child, ref, false))
	}
	return jsonReply(http.StatusOK, items)
}

// validPath reports whether p is a file path the contents API accepts.
func validPath(p string) bool {
	if p == "" {
		return false
	}
	for _, comp := range strings.Split(p, "/") {
		if comp == "" || comp == "." || comp == ".." {
			return false
		}
	}
	return true
}

// putContents serves PUT /repos/{owner}/{repo}/contents/{path} {message,
// content (base64), branch, sha}: it makes a new commit on branch (default:
// the default branch; 404 when it does not exist). Creating a file ignores
// sha (201). Updating one needs the current blob sha: 422 `"sha" wasn't
// supplied.` when missing, 409 "<path> does not match <sha>" when it
// differs (200 otherwise).
func (s *Server) putContents(c *call, rp *repo) *reply {
	p := strings.Trim(c.params["path"], "/")
	var in struct {
		Message *string `json:"message"`
		Content *string `json:"content"`
		Branch  *string `json:"branch"`
		SHA     *string `json:"sha"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	if in.Message == nil {
		return invalidRequest(`"message" wasn't supplied.`)
	}
	if in.Content == nil {
		return invalidRequest(`"content" wasn't supplied.`)
	}
	if !validPath(p) {
		return errorReply(http.StatusUnprocessableEntity, "path contains a malformed path component")
	}
	content, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\n", "", "\r", "").Replace(*in.Content))
	if err != nil {
		return errorReply(http.StatusUnprocessableEntity, "content is not valid Base64")
	}
	branch := rp.defaultBranch
	if in.Branch != nil && *in.Branch != "" {
		branch = *in.Branch
	}
	headSHA, ok := rp.branch(branch)
	if !ok {
		return errorReply(http.StatusNotFound, "Branch "+branch+" not found")
	}
	head := rp.commits[headSHA]
	old, exists := head.files[p]
	if exists {
		if in.SHA == nil || *in.SHA == "" {
			return invalidRequest(`"sha" wasn't supplied.`)
		}
		if *in.SHA != blobSHA(old) {
			return errorReply(http.StatusConflict, fmt.Sprintf("%s does not match %s", p, *in.SHA))
		}
	} else {
		if children, _ := dirEntries(head.files, p); len(children) > 0 {
			return errorReply(http.StatusUnprocessableEntity, p+" is a directory")
		}
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if _, ok := head.files[dir]; ok {
				return errorReply(http.StatusUnprocessableEntity, dir+" is a file")
			}
		}
	}
	files := maps.Clone(head.files)
	files[p] = content
	cm := s.newCommit(rp, []string{headSHA}, files, *in.Message, c.login)
	rp.refs["refs/heads/"+branch] = cm.sha
	status := http.StatusCreated
	if exists {
		status = http.StatusOK
	}
	entry := s.contentEntry(rp, cm, p, branch, false)
	return stored(status, map[string]any{"content": entry, "commit": s.gitCommitJSON(rp, cm)}, &Commit{Kind: KindContent, Ref: branch, SHA: cm.sha})
}
