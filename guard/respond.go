package guard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// guard runs a through the engine and answers req as GitHub would have.
func (t *Transport) guard(req *http.Request, w *write, a reconcile.Action) (*http.Response, error) {
	fail := func(err error) (*http.Response, error) {
		// Said as a Go caller gives options, the step as WithStep sets it.
		return nil, fmt.Errorf("guard %s %s: %w", req.Method, req.URL.Path, failure.In(err, withStep(a.Task)))
	}
	e, err := t.engineFor(req, w.root)
	if err != nil {
		return fail(err)
	}
	ctx := req.Context()
	// What the request leaves to GitHub (a file's branch), as GitHub fills it.
	if a, err = reconcile.Complete(ctx, e.gh, a); err != nil {
		return fail(err)
	}
	a.OnChange = t.opts.OnChange
	p, err := reconcile.Prepare(a)
	if err != nil {
		// Bad input (*reconcile.InvalidError): nothing recorded or sent.
		return fail(effect.Named(err, w.fieldName))
	}
	c := &capture{method: w.method, rest: w.rest}
	res, err := e.eng.Do(withCapture(ctx, c), p)
	if err != nil {
		// GitHub answered the create itself with a refusal (4xx): nothing
		// was created, and the caller gets that answer as GitHub gave it.
		// Anything else (a create that may have happened, another process
		// holding the key) is an error, never a made-up answer.
		if st, hdr, body, ok := c.last(); ok && st >= 400 && st < 500 {
			return answer(req, st, hdr, body, p.Key(), "refused"), nil
		}
		return fail(err)
	}
	if res.PayloadChanged && t.opts.Logf != nil {
		t.opts.Logf("%s %s (key %s) was made by an earlier attempt from another description (%s); nothing new was created", res.Kind, what(res), res.Key, strings.Join(res.Changed, ", "))
	}
	if res.Warning != "" && t.opts.Logf != nil {
		t.opts.Logf("warning: %s", res.Warning)
	}
	if res.Outcome == outcome.Created {
		if st, hdr, body, ok := c.last(); ok && st >= 200 && st < 300 {
			return answer(req, st, hdr, body, res.Key, string(res.Outcome)), nil
		}
	}
	body, err := t.readBack(ctx, req, w, a, res)
	if err != nil {
		return fail(fmt.Errorf("%s %s exists (key %s, %s) but reading it back failed: %w", res.Kind, what(res), res.Key, res.Outcome, err))
	}
	return answer(req, http.StatusCreated, nil, body, res.Key, string(res.Outcome)), nil
}

// withStep names the step option as WithStep sets it for task.
type withStep string

func (t withStep) Name(o effect.Option) string {
	if o.Name != "step" {
		return effect.GoWords{}.Name(o)
	}
	return fmt.Sprintf("guard.WithStep(ctx, %q, %q)", string(t), o.Value)
}

func (t withStep) Set(o effect.Option) string { return "send it with " + t.Name(o) }

func what(r *outcome.Result) string {
	switch {
	case r.Number != 0:
		return "#" + strconv.Itoa(r.Number)
	case r.ID != 0:
		return strconv.FormatInt(r.ID, 10)
	case r.SHA != "":
		return "at " + r.SHA
	}
	return r.URL
}

// readBack reads the artifact res names as GitHub returns it, in the shape
// the create's answer has: the GETs of the kind's Face.ReadBack.
func (t *Transport) readBack(ctx context.Context, req *http.Request, w *write, a reconcile.Action, res *outcome.Result) ([]byte, error) {
	var fields map[string]any
	b, err := json.Marshal(a.Spec)
	if err == nil {
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber() // a number as written, never 1e+06
		err = d.Decode(&fields)
	}
	if err != nil {
		return nil, fmt.Errorf("read back the %s: %w", w.kind, err)
	}
	fields["owner"], fields["repo"] = w.params["owner"], w.params["repo"]
	if res.Number != 0 {
		fields["number"] = res.Number
	}
	if res.ID != 0 {
		fields["id"] = res.ID
	}
	var got [][]byte
	for _, path := range w.face.ReadBack {
		b, err := t.get(ctx, req, w.root+expand(path, fields))
		if err != nil {
			return nil, err
		}
		got = append(got, b)
	}
	if len(got) != 2 {
		return got[0], nil
	}
	// PUT contents answers {content, commit}: the file as it is now, and
	// the commit at the branch's head (the write's own commit unless the
	// branch moved since).
	var out github.RepositoryContentResponse
	if err := json.Unmarshal(got[0], &out.Content); err != nil {
		return nil, fmt.Errorf("decode contents: %w", err)
	}
	var rc github.RepositoryCommit
	if err := json.Unmarshal(got[1], &rc); err != nil {
		return nil, fmt.Errorf("decode commit: %w", err)
	}
	out.Commit = github.Commit{SHA: rc.SHA, HTMLURL: rc.HTMLURL, URL: rc.GetCommit().URL, NodeID: rc.NodeID, Parents: rc.Parents}
	if gc := rc.GetCommit(); gc != nil {
		out.Commit.Message, out.Commit.Author, out.Commit.Committer, out.Commit.Tree = gc.Message, gc.Author, gc.Committer, gc.Tree
	}
	return json.Marshal(out)
}

// expand fills path's {params} from fields, escaped for the path or, after
// "?", for the query.
func expand(path string, fields map[string]any) string {
	p, q, hasQuery := strings.Cut(path, "?")
	fill := func(s string, esc func(string) string) string {
		segs := strings.Split(s, "{")
		for i := 1; i < len(segs); i++ {
			name, after, _ := strings.Cut(segs[i], "}")
			segs[i] = esc(fmt.Sprint(fields[name])) + after
		}
		return strings.Join(segs, "")
	}
	if hasQuery {
		return fill(p, escapePath) + "?" + fill(q, url.QueryEscape)
	}
	return fill(p, escapePath)
}

func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// get reads u with req's credentials, never from a cache.
func (t *Transport) get(ctx context.Context, req *http.Request, u string) ([]byte, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for _, h := range []string{"Authorization", "User-Agent", "X-GitHub-Api-Version"} {
		if v := req.Header.Get(h); v != "" {
			r.Header.Set(h, v)
		}
	}
	r.Header.Set("Accept", "application/vnd.github+json")
	resp, err := noCache{t.base}.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", r.URL.Path, resp.Status)
	}
	return b, nil
}

// answer is the response go-github receives.
func answer(req *http.Request, status int, hdr http.Header, body []byte, key, outcome string) *http.Response {
	h := http.Header{}
	for k, v := range hdr {
		h[k] = append([]string(nil), v...)
	}
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	h.Set("X-Ghonce-Key", key)
	h.Set("X-Ghonce-Outcome", outcome)
	return &http.Response{
		Status: fmt.Sprintf("%d %s", status, http.StatusText(status)), StatusCode: status,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		Request: req,
	}
}

// capture keeps GitHub's answer to the engine's own create request (the
// same method and path as the caller's), so that go-github receives it
// unchanged.
type capture struct {
	method, rest string

	mu     sync.Mutex
	seen   bool
	status int
	header http.Header
	body   []byte
}

type captureKey struct{}

func withCapture(ctx context.Context, c *capture) context.Context {
	return context.WithValue(ctx, captureKey{}, c)
}

func (c *capture) last() (int, http.Header, []byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status, c.header, c.body, c.seen
}

// observe records resp if it answers the create c waits for, giving resp a
// fresh copy of its body.
func (c *capture) observe(req *http.Request, resp *http.Response) {
	if req.Method != c.method || !strings.HasSuffix(req.URL.EscapedPath(), "/"+c.rest) {
		return
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	if err != nil {
		return // the engine sees the short body and its own error
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen, c.status, c.header, c.body = true, resp.StatusCode, resp.Header.Clone(), b
}
