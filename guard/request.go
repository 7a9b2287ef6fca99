package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/ghonce/ghonce/reconcile"
)

// write is a request the Transport recognises as one of the guarded kinds.
type write struct {
	kind         string // "pr", "issue", "comment", "branch", "file"
	root         string // the API root, e.g. https://api.github.com/
	owner, name  string
	number       int    // comment: the issue or pull request
	path         string // file: the path in the repository
	method, rest string // rest: the path after the API root, e.g. repos/o/r/pulls
}

// parseWrite recognises req as a guarded write; otherwise it returns nil
// and why it is not one.
func parseWrite(req *http.Request) (*write, string) {
	p := req.URL.EscapedPath()
	i := strings.Index(p, "/repos/")
	if i < 0 {
		return nil, "not a write the guard knows"
	}
	w := &write{method: req.Method, root: req.URL.Scheme + "://" + req.URL.Host + p[:i+1], rest: p[i+1:]}
	segs := strings.Split(strings.TrimPrefix(p[i:], "/repos/"), "/")
	unesc := func(s string) string {
		if u, err := url.PathUnescape(s); err == nil {
			return u
		}
		return s
	}
	if len(segs) < 3 {
		return nil, "not a write the guard knows"
	}
	w.owner, w.name = unesc(segs[0]), unesc(segs[1])
	s := segs[2:]
	switch {
	case req.Method == http.MethodPost && len(s) == 1 && s[0] == "pulls":
		w.kind = "pr"
	case req.Method == http.MethodPost && len(s) == 1 && s[0] == "issues":
		w.kind = "issue"
	case req.Method == http.MethodPost && len(s) == 3 && s[0] == "issues" && s[2] == "comments":
		n, err := strconv.Atoi(s[1])
		if err != nil || n <= 0 {
			return nil, "not a write the guard knows"
		}
		w.kind, w.number = "comment", n
	case req.Method == http.MethodPost && len(s) == 2 && s[0] == "git" && s[1] == "refs":
		w.kind = "branch"
	case req.Method == http.MethodPut && len(s) >= 2 && s[0] == "contents":
		parts := make([]string, len(s)-1)
		for j, seg := range s[1:] {
			parts[j] = unesc(seg)
		}
		w.kind, w.path = "file", strings.Join(parts, "/")
	default:
		return nil, fmt.Sprintf("%s /%s is not a write the guard knows (it guards creating pull requests, issues, comments, branches and files)", req.Method, w.rest)
	}
	return w, ""
}

// notGuarded says a write of a known kind asks for something its kind
// cannot carry; it is then handled as an unknown write.
type notGuarded struct{ why string }

func (e *notGuarded) Error() string { return e.why }

// action reads req's body (returned, so the request can still be sent) and
// builds the engine's action.
func (w *write) action(req *http.Request, task, stepName string) (reconcile.Action, []byte, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return reconcile.Action{}, nil, fmt.Errorf("read request body: %w", err)
		}
	}
	// An empty step is the kind's default (reconcile.DefaultStepper), as
	// through every other front.
	a := reconcile.Action{Task: task, Step: stepName, Repo: w.owner + "/" + w.name}
	var err error
	a.Spec, err = w.spec(body)
	return a, body, err
}

// spec decodes body into the kind's description. Fields the kind cannot
// carry make the write a notGuarded one: dropping them would create
// something other than what the caller asked for.
func (w *write) spec(body []byte) (reconcile.Spec, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("decode request body: %w", err)
	}
	allowed := map[string][]string{
		"pr":      {"title", "head", "base", "body", "draft"},
		"issue":   {"title", "body", "labels"},
		"comment": {"body"},
		"branch":  {"ref", "sha"},
		"file":    {"message", "content", "sha", "branch"},
	}[w.kind]
	var extra []string
	for k, v := range m {
		if !contains(allowed, k) && string(v) != "null" {
			extra = append(extra, k)
		}
	}
	if len(extra) > 0 {
		sort.Strings(extra)
		return nil, &notGuarded{why: fmt.Sprintf("the guard's %s kind cannot carry %s (send them in a separate write after the guarded one)", w.kind, strings.Join(extra, ", "))}
	}
	var in struct {
		Title, Head, Base, Body, Ref, SHA, Message, Branch string
		Draft                                              bool
		Labels                                             []string
		Content                                            []byte // base64 in JSON, as go-github sends it
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, fmt.Errorf("decode request body: %w", err)
	}
	switch w.kind {
	case "pr":
		return reconcile.PR{Base: in.Base, Head: in.Head, Title: in.Title, Body: in.Body, Draft: in.Draft}, nil
	case "issue":
		return reconcile.Issue{Title: in.Title, Body: in.Body, Labels: in.Labels}, nil
	case "comment":
		return reconcile.Comment{Number: w.number, Body: in.Body}, nil
	case "branch":
		name, ok := strings.CutPrefix(in.Ref, "refs/heads/")
		if !ok {
			return nil, &notGuarded{why: fmt.Sprintf("ref %q is not a branch (refs/heads/...)", in.Ref)}
		}
		return reconcile.Branch{Name: name, SHA: in.SHA}, nil
	case "file":
		// An empty branch is the repository's default branch; the engine
		// needs its name, which guard resolves before running the action.
		return reconcile.File{Branch: in.Branch, Path: w.path, Message: in.Message, Content: in.Content, Replaces: in.SHA}, nil
	}
	return nil, errors.New("unknown kind " + w.kind)
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// restoreBody gives req its body back after action read it.
func restoreBody(req *http.Request, body []byte) *http.Request {
	r := req.Clone(req.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return r
}
