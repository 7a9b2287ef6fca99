package ghcheck

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/taskkey"
)

// BlobSHA returns the git blob SHA-1 of content, as git hash-object and
// GitHub's contents API compute it: sha1("blob <len>\x00" + content).
func BlobSHA(content []byte) string {
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(content)) + "\x00"))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// FindFile reports whether path on branch already has exactly content:
// GET /repos/{o}/{r}/contents/{path}?ref={branch}, a consistent read of the
// branch's current tree; the blob SHA GitHub reports is compared with
// BlobSHA(content).
//
// Found: same content. Absent: a 404 (no such file, or no such branch) or
// other content (not done yet: PutFile updates it). Conflict: the path is a
// directory, symlink or submodule. Unknown: a read failed.
//
// GitHub API docs: https://docs.github.com/rest/repos/contents#get-repository-content
func (c *Client) FindFile(ctx context.Context, r Repo, branch, path string, content []byte) Result {
	if err := CheckFile(branch, path); err != nil {
		return c.unknown(fmt.Errorf("find file: %w", err))
	}
	cur, err := c.readFile(ctx, c.newRun(), r, branch, path)
	if notFound(err) || (err == nil && cur.GetType() == "file" && cur.GetSHA() != BlobSHA(content)) {
		c.files.Store(fileMemo(r, branch, path), fileSeen{cur: cur, err: err, at: c.budget.cfg.Now()})
	}
	switch {
	case notFound(err):
		return Result{State: Absent}
	case err != nil:
		return c.unknown(err)
	case cur.GetType() != "file":
		return Result{State: Conflict, Err: fmt.Errorf("%s on branch %s of %s is a %s, not a file: choose another path", path, branch, r, typeOf(cur))}
	case cur.GetSHA() != BlobSHA(content):
		return Result{State: Absent}
	}
	return Result{State: Found, Artifact: Artifact{SHA: cur.GetSHA(), URL: cur.GetHTMLURL()}}
}

// PutFile writes content to path on branch in one commit with message:
// PUT /repos/{o}/{r}/contents/{path}. It sends the file's current blob
// SHA, which GitHub requires to update a file (and no SHA to create one),
// as FindFile on this client just read it, or else as it reads it first;
// if the file already has exactly content, nothing is written. Reusing the
// look-up's read saves a round trip and loses nothing: GitHub checks the
// SHA against the branch as it writes. If someone changes
// the file between the read and the write, GitHub answers 409 or 422 and
// nothing is written (ClassRefused: rerun). A failed read sends nothing
// (ClassNotSent). The write is not retried once it may have been sent.
//
// The artifact's SHA is the new blob SHA, its URL the file's html_url.
//
// GitHub API docs: https://docs.github.com/rest/repos/contents#create-or-update-file-contents
//
// replaces, when not empty, is the blob SHA the caller expects the file to
// have now: a file that already holds content is still done, but one whose
// SHA differs from replaces (or that does not exist) is refused with
// nothing written, so a change someone made since the caller read the
// file is never overwritten. Empty replaces whatever is there.
func (c *Client) PutFile(ctx context.Context, r Repo, branch, path, message string, content []byte, replaces string) (Artifact, error) {
	if err := CheckFile(branch, path); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("put file: %w", err))
	}
	if err := CheckCommitMessage(message); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("put file: %w", err))
	}
	want := BlobSHA(content)
	rn := c.newRun()
	cur, err := c.readFileOnce(ctx, rn, r, branch, path)
	opts := &github.RepositoryContentFileOptions{
		Message: github.String(message),
		Content: content,
		Branch:  github.String(branch),
	}
	switch {
	case notFound(err) && replaces != "":
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("put file: %s does not exist on branch %s of %s, but the call names blob %.12s to replace: it was deleted or moved; read it again", path, branch, r, replaces))
	case notFound(err):
	case err != nil:
		return Artifact{}, c.createErr(ClassNotSent, fmt.Errorf("put file: %w", err))
	case cur.GetType() != "file":
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("put file: %s on branch %s of %s is a %s, not a file: choose another path", path, branch, r, typeOf(cur)))
	case cur.GetSHA() == want:
		return Artifact{SHA: want, URL: cur.GetHTMLURL()}, nil
	case replaces != "" && cur.GetSHA() != replaces:
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("put file: %s on branch %s of %s is blob %.12s now, not %.12s as expected: someone changed it since it was read; read it again and redo the change", path, branch, r, cur.GetSHA(), replaces))
	default:
		opts.SHA = github.String(cur.GetSHA())
	}

	// CreateFile and UpdateFile are the same PUT; the sha decides.
	var res *github.RepositoryContentResponse
	class, err := rn.create(ctx, func(ctx context.Context) (*github.Response, error) {
		// Not Repositories.CreateFile: it pastes path into the URL
		// unescaped, so "C#/x.md" would be written as "C".
		req, err := c.gh.NewRequest(http.MethodPut, contentsURL(r, path, ""), opts)
		if err != nil {
			return nil, err
		}
		res = new(github.RepositoryContentResponse)
		return c.gh.Do(ctx, req, res)
	})
	if err != nil {
		err = fmt.Errorf("put file %s on branch %s of %s: %w", path, branch, r, err)
		if st := httpStatus(err); class == ClassRefused && (st == http.StatusConflict || st == http.StatusUnprocessableEntity) {
			err = &hintError{msg: err.Error() + " (the file or branch changed meanwhile, or the branch does not exist): rerun", err: err}
		}
		return Artifact{}, c.createErr(class, err)
	}
	a := Artifact{SHA: res.GetContent().GetSHA(), URL: res.GetContent().GetHTMLURL()}
	if a.SHA == "" {
		a.SHA = want
	}
	return a, nil
}

// fileSeen is what FindFile read of a file that is not done yet, kept
// for the PutFile that follows it (readFileOnce).
type fileSeen struct {
	cur *github.RepositoryContent
	err error // a 404, or nil
	at  time.Time
}

// fileSeenFor is how long what FindFile read stands in for PutFile's read:
// the engine creates right after it looks; a look-up left without a create
// (another process won the claim) is not reused much later.
const fileSeenFor = time.Minute

func fileMemo(r Repo, branch, path string) string {
	return r.String() + "\x00" + branch + "\x00" + path
}

// readFileOnce returns what FindFile last read of path on branch, once, or
// reads it. What it returns may be stale by the time PutFile writes; so it
// could be fresh from a read, and GitHub refuses a write whose SHA is not
// the branch's (409/422, nothing written).
func (c *Client) readFileOnce(ctx context.Context, rn *run, r Repo, branch, path string) (*github.RepositoryContent, error) {
	if v, ok := c.files.LoadAndDelete(fileMemo(r, branch, path)); ok {
		if seen := v.(fileSeen); c.budget.cfg.Now().Sub(seen.at) < fileSeenFor {
			return seen.cur, seen.err
		}
	}
	return c.readFile(ctx, rn, r, branch, path)
}

// readFile reads path on branch; a directory comes back as a
// RepositoryContent of type "dir".
func (c *Client) readFile(ctx context.Context, rn *run, r Repo, branch, path string) (*github.RepositoryContent, error) {
	var file *github.RepositoryContent
	err := rn.read(ctx, func(ctx context.Context) (*github.Response, error) {
		req, err := c.gh.NewRequest(http.MethodGet, contentsURL(r, path, branch), nil)
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		resp, err := c.gh.Do(ctx, req, &raw)
		if err != nil {
			return resp, err
		}
		file = new(github.RepositoryContent)
		if err := json.Unmarshal(raw, file); err != nil {
			// GitHub lists a directory as an array of its entries.
			file = &github.RepositoryContent{Type: github.String("dir")}
		}
		return resp, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read %s on branch %s of %s: %w", path, branch, r, err)
	}
	return file, nil
}

// contentsURL is repos/{o}/{r}/contents/{path}[?ref=], relative to the
// API root, with every segment of path escaped exactly once: GitHub
// decodes each segment once, so the file written is the file looked up
// (go-github's GetContents and CreateFile escape differently, the latter
// not at all).
func contentsURL(r Repo, path, ref string) string {
	u := "repos/" + url.PathEscape(r.Owner) + "/" + url.PathEscape(r.Name) + "/contents/" + escapeSegments(path)
	if ref != "" {
		u += "?ref=" + url.QueryEscape(ref)
	}
	return u
}

func typeOf(rc *github.RepositoryContent) string {
	if t := rc.GetType(); t != "" {
		return t
	}
	return "non-file"
}

// CheckFile refuses a branch or path FindFile and PutFile would refuse
// before sending anything: an invalid branch name, or a path
// taskkey.CheckFilePath refuses (empty, absolute, a directory, an empty
// segment, "." or ".." in any spelling, an invisible character). A caller
// that validates its input with it (reconcile's File) refuses exactly what
// this layer refuses.
func CheckFile(branch, path string) error {
	if err := taskkey.CheckBranchName(branch); err != nil {
		return err
	}
	return taskkey.CheckFilePath(path)
}

// CheckCommitMessage refuses the commit message PutFile would refuse: empty
// or only white space.
func CheckCommitMessage(message string) error {
	if strings.TrimSpace(message) == "" {
		return &effect.InvalidError{Field: "message", Problem: "is empty", Want: "the commit's message"}
	}
	return nil
}
