package fakegithub

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultPrefix is the path the API is served under when Options.Prefix is
// empty: GitHub Enterprise's layout (https://HOST/api/v3/).
const DefaultPrefix = "/api/v3/"

// maxBody bounds a request body (GitHub's contents API takes files up to
// 100 MB; nothing ghonce sends comes near 32 MiB).
const maxBody = 32 << 20

// Options configure a Server.
type Options struct {
	// Prefix is the path the API is served under, with a leading and a
	// trailing slash; default DefaultPrefix. Requests outside it get 404.
	Prefix string
	// Now is the clock for created_at and updated_at and rate-limit windows.
	// Default time.Now.
	Now func() time.Time
	// CoreLimit is the primary rate limit per user and hour; default 5000 (GitHub's for a personal token). Once spent,
	// requests get 403 with x-ratelimit-remaining: 0 until the window resets.
	CoreLimit int
	// CoreWindow is the length of the primary rate limit's window; default
	// an hour, as GitHub's. Tests shorten it to see a spent limit reset.
	CoreWindow time.Duration
	// ContentLimits are secondary limits on writes per user (see
	// ContentLimit); none by default.
	ContentLimits []ContentLimit
	// Intercept, when set, is called at the points of the request path it
	// names (see Interceptor). The fake has no faults of its own: this is
	// where a test kit (package fixtures) adds them.
	Intercept Interceptor
	// Listener, when set, is where the server accepts connections instead
	// of a fresh port on 127.0.0.1, e.g. port 80 of another loopback
	// address for a client that cannot be told a port (github-mcp-server's
	// GITHUB_HOST). The server owns it and closes it on Close.
	Listener net.Listener
}

// Server is the fake. Create it with NewServer and Close it when done.
type Server struct {
	ts         *listener
	prefix     string
	now        func() time.Time
	coreLimit  int
	coreWindow time.Duration
	routes     []route
	intercept  Interceptor

	mu        sync.Mutex
	tokens    map[string]string // token -> login
	users     map[string]*user  // lower(login) -> user
	repos     map[string]*repo  // lower(owner/name) -> repo
	reposByID map[int64]*repo
	ids       map[idSeq]int64
	requests  []Request
	writes    int
	rates     map[string]*rateWindow // login -> its core window
	// active counts handlers running; idle is signalled when it drops to
	// zero (WaitIdle).
	active int
	idle   *sync.Cond
	apps   *appState  // GitHub Apps (apps.go); nil until one is added
	gitdb  gitdbState // gitdb.go

	contentLimits []ContentLimit
	writesBy      map[string][]time.Time // login -> times of its recent writes
	secondaryHits int
}

// Request is one request the server received, as Server.Requests reports it.
// Tokens are never stored.
type Request struct {
	Method string
	// Path is the unescaped path without the prefix, e.g. "/repos/o/r/pulls".
	Path     string
	RawQuery string
	// Login is the authenticated user, "" when authentication failed.
	Login string
	// Status is the status code written, 0 when the connection was dropped
	// or the client went away before an answer.
	Status int
	// Fault is the name of what the Interceptor answered instead of the
	// fake (Verdict.Name), nil when the fake answered.
	Fault fmt.Stringer
	// Start is when the request arrived and End when its answer was about
	// to leave (or the connection was dropped), on the wall clock, not
	// Options.Now: with SetLatency they tell requests a client sent one
	// after another from ones it had open together (RoundTrips).
	Start, End time.Time
}

// RoundTrips is the length of the longest chain of requests in reqs of
// which each arrived after the one before had been answered: the round
// trips a client spent one after another, requests it had open together
// counted once. Set a latency (fixtures' SetLatency) well above the machine's
// scheduling delays, so that requests sent together overlap for certain.
func RoundTrips(reqs []Request) int {
	byEnd := slices.Clone(reqs)
	slices.SortFunc(byEnd, func(a, b Request) int { return a.End.Compare(b.End) })
	n := 0
	var last time.Time
	for _, r := range byEnd {
		if n == 0 || !r.Start.Before(last) {
			n++
			last = r.End
		}
	}
	return n
}

// NewServer starts a fake on 127.0.0.1 with no users and no repositories.
// It panics when it cannot listen there; Start returns the error.
func NewServer(opts Options) *Server {
	s, err := Start(opts)
	if err != nil {
		panic(err)
	}
	return s
}

// Start is NewServer, returning the error when the fake cannot listen.
func Start(opts Options) (*Server, error) {
	s := &Server{
		prefix:        normalizePrefix(opts.Prefix),
		now:           opts.Now,
		coreLimit:     opts.CoreLimit,
		coreWindow:    opts.CoreWindow,
		tokens:        map[string]string{},
		users:         map[string]*user{},
		repos:         map[string]*repo{},
		reposByID:     map[int64]*repo{},
		ids:           map[idSeq]int64{},
		rates:         map[string]*rateWindow{},
		writesBy:      map[string][]time.Time{},
		contentLimits: opts.ContentLimits,
		intercept:     opts.Intercept,
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.coreLimit <= 0 {
		s.coreLimit = 5000
	}
	if s.coreWindow <= 0 {
		s.coreWindow = time.Hour
	}
	s.idle = sync.NewCond(&s.mu)
	s.routes = s.buildRoutes()
	ts, err := listen(opts.Listener, http.HandlerFunc(s.serveHTTP))
	if err != nil {
		return nil, err
	}
	s.ts = ts
	return s, nil
}

func normalizePrefix(p string) string {
	if p == "" {
		return DefaultPrefix
	}
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if !strings.HasSuffix(p, "/") {
		p += "/"
	}
	return p
}

// URL is the API base URL including the prefix, with a trailing slash, e.g.
// "http://127.0.0.1:41234/api/v3/". Give it to go-github as BaseURL.
func (s *Server) URL() string { return s.ts.url + s.prefix }

// WebURL is the root html_url values are built on, e.g.
// "http://127.0.0.1:41234/" (like GitHub Enterprise, the web UI would live
// at the host root). Nothing is served there.
func (s *Server) WebURL() string { return s.ts.url + "/" }

// Close shuts the server down, waiting for requests in flight.
func (s *Server) Close() { s.ts.close() }

// AddUser registers a token for login. A request with a token nobody
// registered gets 401 {"message":"Bad credentials"}. Logins may be
// "name[bot]"; such users have type "Bot".
func (s *Server) AddUser(login, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = s.userFor(login).login
}

// Requests returns every request received so far, in order of completion.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Writes is the number of requests other than GET and HEAD that reached an
// endpoint's handler (whether or not they succeeded). Requests answered by
// authentication, routing, rate limiting, a before-commit fault or the JSON
// parser (400), and those BeforeWrite abandoned, do not count.
func (s *Server) Writes() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.writes
}

// PendingWrite is a write request about to reach its endpoint, as
// Interceptor.Writing sees it.
type PendingWrite struct {
	Method string
	// Path is the unescaped request path without the prefix.
	Path  string
	Login string
	// Body is the request's body as it arrived (the ref a POST .../git/refs
	// names tells a branch from a repository ledger's claim).
	Body string
}

// CommitKind says what a write stored.
type CommitKind string

// The kinds of Commit.
const (
	KindPull    CommitKind = "pull"    // a PR was created or edited
	KindIssue   CommitKind = "issue"   // an issue was created or edited
	KindComment CommitKind = "comment" // an issue comment was created, edited or deleted
	KindRef     CommitKind = "ref"     // a git ref was created, moved or deleted
	KindLabel   CommitKind = "label"   // labels were added to an issue/PR, or a repository label changed
	KindContent CommitKind = "content" // a file was created or updated (a new commit on a branch)
)

// Commit describes one stored write, as Interceptor.Committed sees it.
type Commit struct {
	Method string
	// Path is the request path without the prefix.
	Path  string
	Kind  CommitKind
	Login string
	// Number is the issue or PR number (for comments and issue labels too).
	Number int
	// ID is the comment or label id.
	ID int64
	// Ref is the full ref ("refs/heads/x") for refs, the branch for content.
	Ref string
	// SHA is the ref's new target or the new commit for content.
	SHA string
}

// call is one request on its way through a handler.
type call struct {
	r      *http.Request
	login  string
	params map[string]string
	body   []byte
	// segs are the escaped path segments relative to the prefix, after a
	// /repositories/{id} alias was rewritten to /repos/{owner}/{name}.
	segs []string
	// rel is the unescaped request path relative to the prefix.
	rel string
}

// reply is what a handler answers.
type reply struct {
	status int
	body   []byte
	header http.Header
	// raw marks body as not JSON (content type is set by the handler).
	raw    bool
	commit *Commit
}

// WaitIdle blocks until no request is being handled. A client killed in the
// middle of a request leaves its handler running (it finishes the commit and
// logs the request after the client is gone); tests that count requests
// call WaitIdle after the kill, so the dead client's request is counted
// before they take their baseline.
func (s *Server) WaitIdle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.active > 0 {
		s.idle.Wait()
	}
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.active++
	now := s.now
	s.mu.Unlock()
	// GitHub's Date header is GitHub's clock: the fake's is Options.Now.
	w.Header().Set("Date", now().UTC().Format(http.TimeFormat))
	defer func() {
		s.mu.Lock()
		if s.active--; s.active == 0 {
			s.idle.Broadcast()
		}
		s.mu.Unlock()
	}()
	escRel, ok := strings.CutPrefix(r.URL.EscapedPath(), s.prefix)
	rel, _ := strings.CutPrefix(r.URL.Path, s.prefix)
	rec := Request{Method: r.Method, Path: "/" + rel, RawQuery: r.URL.RawQuery, Start: time.Now()}
	if !ok {
		rec.Path = r.URL.Path
	}
	// The request is logged before its answer leaves, so a client that got
	// an answer always finds its request in Requests().
	logged := false
	logRequest := func() {
		if !logged {
			logged = true
			rec.End = time.Now()
			s.mu.Lock()
			s.requests = append(s.requests, rec)
			s.mu.Unlock()
		}
	}
	defer logRequest()
	answer := func(rep *reply) {
		rec.Status = rep.status
		logRequest()
		s.write(w, rep)
	}
	drop := func() {
		logRequest()
		dropConn(w)
	}

	// Read the body first: only then does net/http notice a client that
	// hangs up, which cancels r.Context() and ends the latency early.
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			answer(errorReply(http.StatusRequestEntityTooLarge, "Request body too large"))
		}
		return
	}
	if s.intercept != nil && !s.intercept.Arrived(r) {
		return
	}

	if !ok {
		answer(notFound())
		return
	}

	if rep := s.serveApp(r, escRel); rep != nil {
		answer(rep)
		return
	}
	login, authed := s.authenticate(r)
	if !authed {
		rep := errorReply(http.StatusUnauthorized, "Bad credentials")
		rep.header, _ = s.countRate("", 1)
		answer(rep)
		return
	}
	rec.Login = login

	c := &call{r: r, login: login, body: body, rel: "/" + rel}
	rt, found := s.match(c, r.Method, strings.Split(escRel, "/"))
	if !found {
		rep := notFound()
		rep.header, _ = s.countRate(login, 1)
		answer(rep)
		return
	}

	spend := 1
	if rt.free {
		spend = 0
	}
	rateHdr, exceeded := s.countRate(login, spend)
	if exceeded {
		answer(s.primaryRateLimitReply(login, rateHdr))
		return
	}

	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.mu.Lock()
		after, limited := s.contentLimitedLocked(login)
		s.mu.Unlock()
		if limited {
			answer(secondaryLimitReply(rateHdr, max(after, time.Second)))
			return
		}
	}

	var v *Verdict
	if s.intercept != nil {
		v = s.intercept.Routed(s.exchange(c, rateHdr))
	}
	if v != nil {
		rec.Fault = v.Name
		if !v.AfterCommit {
			if v.Drop {
				drop()
				return
			}
			answer(v.reply())
			return
		}
	}

	// GitHub parses a JSON body before the endpoint sees it.
	if b := bytes.TrimSpace(body); len(b) > 0 && !json.Valid(b) {
		rep := errorReply(http.StatusBadRequest, "Problems parsing JSON")
		rep.header = rateHdr
		answer(rep)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if s.intercept != nil && !s.intercept.Writing(&PendingWrite{Method: r.Method, Path: c.rel, Login: login, Body: string(body)}) {
			drop()
			return
		}
		s.mu.Lock()
		s.writes++
		s.mu.Unlock()
	}
	rep := rt.h(c)
	if rep.commit != nil {
		rep.commit.Method = r.Method
		rep.commit.Path = c.rel
		rep.commit.Login = login
		if s.intercept != nil {
			s.intercept.Committed(rep.commit)
		}
	}
	if v != nil {
		if v.Drop {
			drop()
			return
		}
		if v.Status != 0 {
			rep = v.reply()
		}
	}
	if conditional(r, rep) && !rt.free {
		// GitHub does not count a 304 against the primary rate limit.
		rateHdr, _ = s.countRate(login, -1)
	}
	if rep.header == nil {
		rep.header = http.Header{}
	}
	for k, v := range rateHdr {
		rep.header[k] = v
	}
	answer(rep)
}

// authenticate maps the Authorization header ("token X" or "Bearer X") to a
// login.
func (s *Server) authenticate(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || (!strings.EqualFold(scheme, "token") && !strings.EqualFold(scheme, "bearer")) {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	s.mu.Lock()
	defer s.mu.Unlock()
	login, ok := s.tokens[tok]
	return login, ok && tok != "" && !s.tokenExpiredLocked(tok)
}

// exposedHeaders are the response headers GitHub lets a browser read
// (its Access-Control-Expose-Headers).
var exposedHeaders = []string{"ETag", "Link", "Location", "Retry-After", "X-GitHub-OTP",
	"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Used", "X-RateLimit-Resource", "X-RateLimit-Reset",
	"X-OAuth-Scopes", "X-Accepted-OAuth-Scopes", "X-Poll-Interval", "X-GitHub-Media-Type", "X-GitHub-SSO",
	"X-GitHub-Request-Id", "Deprecation", "Sunset"}

// write sends rep.
func (s *Server) write(w http.ResponseWriter, rep *reply) {
	h := w.Header()
	for k, v := range rep.header {
		h[k] = v
	}
	if !rep.raw && len(rep.body) > 0 {
		h.Set("Content-Type", "application/json; charset=utf-8")
	}
	h.Set("X-GitHub-Media-Type", "github.v3; format=json")
	h.Set("Access-Control-Expose-Headers", strings.Join(exposedHeaders, ", "))
	w.WriteHeader(rep.status)
	if len(rep.body) > 0 {
		_, _ = w.Write(rep.body)
	}
}

// dropConn closes the client's connection without an answer.
func dropConn(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		// Cannot hijack (HTTP/2): abort the handler, which resets the stream.
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// marshal encodes v as GitHub does: no HTML escaping, so "<!-- -->" markers
// arrive as written.
func marshal(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Every value passed here is built by this package from plain types.
		return []byte(`{"message":"Server Error"}`)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

func jsonReply(status int, v any) *reply {
	return &reply{status: status, body: marshal(v)}
}

// stored answers a write that stored commit with status and body.
func stored(status int, body any, commit *Commit) *reply {
	return &reply{status: status, body: marshal(body), commit: commit}
}

// created answers a write that made the resource at url: 201, with its
// URL in Location.
func created(url string, body any, commit *Commit) *reply {
	rep := stored(http.StatusCreated, body, commit)
	rep.header = http.Header{"Location": {url}}
	return rep
}

const docURL = "https://docs.github.com/rest"

type errorBody struct {
	Message          string     `json:"message"`
	Errors           []apiError `json:"errors,omitempty"`
	DocumentationURL string     `json:"documentation_url"`
}

// apiError is one entry of a 422's errors array, as go-github's Error
// decodes it.
type apiError struct {
	Value    any    `json:"value,omitempty"`
	Resource string `json:"resource,omitempty"`
	Code     string `json:"code,omitempty"`
	Field    string `json:"field,omitempty"`
	Message  string `json:"message,omitempty"`
}

func errorReply(status int, message string) *reply {
	return jsonReply(status, errorBody{Message: message, DocumentationURL: docURL})
}

func notFound() *reply { return errorReply(http.StatusNotFound, "Not Found") }

func validationFailed(errs ...apiError) *reply {
	return jsonReply(http.StatusUnprocessableEntity, errorBody{Message: "Validation Failed", Errors: errs, DocumentationURL: docURL})
}

func invalidRequest(format string, a ...any) *reply {
	return errorReply(http.StatusUnprocessableEntity, "Invalid request.\n\n"+fmt.Sprintf(format, a...))
}

// decodeBody decodes a JSON request body into v. An empty body decodes as
// {}. It answers 400 "Problems parsing JSON" for malformed JSON and 422 for
// a value of the wrong type, like GitHub.
func decodeBody(c *call, v any) *reply {
	b := bytes.TrimSpace(c.body)
	if len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			field := typeErr.Field
			if field == "" {
				return invalidRequest("%s is not a %s.", typeErr.Value, jsonTypeName(typeErr.Type.Kind().String()))
			}
			return invalidRequest("For 'properties/%s', %s is not a %s.", field, typeErr.Value, jsonTypeName(typeErr.Type.Kind().String()))
		}
		return errorReply(http.StatusBadRequest, "Problems parsing JSON")
	}
	return nil
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "string"
	case "bool":
		return "boolean"
	case "slice", "array":
		return "array"
	case "map", "struct", "ptr":
		return "object"
	}
	return "number"
}
