// Package guard makes the writes a go-github client sends happen once per
// (task, step), with no change to the caller's code but its client:
//
//	t, err := guard.New(http.DefaultTransport, guard.Options{Ledger: l})
//	gh := github.NewClient(&http.Client{Transport: t}).WithAuthToken(token)
//	ctx = guard.WithStep(ctx, "ISSUE-42", "open-pr")
//	pr, _, err := gh.PullRequests.Create(ctx, "octo-org", "hello-world", &github.NewPullRequest{...})
//
// The Transport recognises the REST writes ghonce's kinds declare (each
// kind's effect.Face, which also says which fields it carries;
// docs/reference/kinds.md lists them with their default steps)
// and runs each through ghonce's engine (package reconcile) under the key
// of the task and step its request's context carries: the same key
// `ghonce pr create --task T` and the MCP tool use for the same task, step
// and target, so a bot that mixes them cannot open two pull requests. The
// engine records the intent in the ledger, looks on GitHub with consistent
// reads for an artifact of ours an earlier attempt made, and creates it only
// when there is none. go-github then receives what GitHub answered the
// create (201 and the artifact), or, when an earlier attempt made it, the
// artifact as GitHub returns it (201 and the same JSON shape), so the
// go-github type of each write it recognises (*github.PullRequest,
// *github.Issue, ...) decodes as usual.
// Every guarded answer carries X-Ghonce-Key and X-Ghonce-Outcome (created,
// found or skipped; refused when GitHub refused the create, whose answer,
// a 4xx, go-github then receives as GitHub gave it). A create that may
// have happened, or a key another process holds, is an error wrapping
// the engine's (*outcome.UnconfirmedError, *outcome.InProgressError),
// never a made-up answer.
//
// Reads (GET, HEAD) always pass through. A write of another kind, or one of
// these with a field its kind cannot carry (assignees, reviewers, a
// milestone, a committer), passes through when the context carries no task,
// and otherwise follows Options.Unknown. A known write whose context
// carries no task takes the task from the environment, as the CLI does
// (GHONCE_TASK, else inside GitHub Actions the run's default task; the
// step from GHONCE_STEP, else the kind's default); with none there it is
// refused with an *UnguardedError, sending nothing, unless Options.NoTask
// is Pass, which sends it unguarded and logs that it did.
//
// When a key is already done from another text and nothing but the text
// could tell a reworded retry from another act (no step named, no earlier
// attempt that died unanswered, no earlier attempt of this Actions run),
// the write fails with an error wrapping a *reconcile.SameOrAnotherError:
// the first artifact, both texts and the step for another act
// (Options.OnChange; docs/design/same-act.md). Never the first artifact
// as the answer to what may be another act.
//
// # Where it sits
//
// Outermost, with retrying and authenticating transports below it, as its
// base:
//
//	http.Client -> guard -> gofri/go-github-ratelimit -> ghinstallation (or oauth2) -> http.DefaultTransport
//
// Below it, a transport may retry only after an answer that created
// nothing: go-github-ratelimit waits out a secondary rate limit (403/429
// with Retry-After) and re-sends, which is safe. A transport that re-sends
// a POST after a lost answer or a 5xx (hashicorp/go-retryablehttp's
// default policy) is never safe, below or above: GitHub may have created
// it. Above the guard, a retrier would re-run a guarded write the guard
// answered with an error ("maybe created", "in progress elsewhere"),
// which the key makes harmless but slow, and a cache above it would
// answer go-github's own reads, which the guard does not see. The
// engine's GitHub layer waits for rate limits by itself, so the waiter is
// optional. With ghinstallation or oauth2 below, go-github's requests
// carry no Authorization header: give the guard the same identity as
// Options.TokenSource.
//
// GitHub answers the reads the engine makes with Cache-Control: private,
// max-age=60; a cache (gregjones/httpcache) in the base would answer a
// look-up from a minute-old listing that predates the write it looks for.
// Every request the guard makes itself therefore carries Cache-Control:
// no-cache, which such a cache honours by asking GitHub again (a
// conditional request is still consistent: GitHub compares the current
// content).
package guard

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/actions"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/reconcile"
)

// Policy says what the Transport does with a write it does not guard.
type Policy int

const (
	// Default is each option's default (see Options.NoTask, Options.Unknown).
	Default Policy = iota
	// Pass sends the write on to the base transport, unguarded.
	Pass
	// Refuse fails the request with an *UnguardedError, sending nothing.
	Refuse
)

// Options configure a Transport.
type Options struct {
	// Ledger records every guarded write; required. A ledger that can
	// say it cannot vouch for the past (*store.Opened, through
	// CannotVouch) is asked; otherwise LedgerNew says it.
	Ledger ledger.Ledger
	// LedgerNew tells the engine that the ledger was just created and an
	// earlier one may have been lost, so no "never attempted" is trusted.
	LedgerNew bool
	// TokenSource authenticates the engine's own reads and writes when
	// go-github's requests carry no Authorization header because the base
	// transport adds it (oauth2.Transport, ghinstallation): give the same
	// source the base uses. Requests that carry "Bearer T" or "token T"
	// (go-github's WithAuthToken) need none.
	TokenSource oauth2.TokenSource
	// TrustedAuthors are logins whose artifacts count as ours besides the
	// token's own (e.g. "my-app[bot]").
	TrustedAuthors []string
	// NoTask is what happens to a write of a guarded kind whose context
	// carries no task (see WithStep). Default: the task of the environment
	// (GHONCE_TASK, else inside GitHub Actions the run's default task, as
	// the CLI derives it), else refused with an *UnguardedError. Refuse:
	// refused, the environment not asked. Pass: sent unguarded, each one
	// logged (Logf, else the standard logger), since a rerun can duplicate it.
	NoTask Policy
	// Unknown is what happens to a write the Transport cannot guard whose
	// context carries a task: Pass (Default) or Refuse.
	Unknown Policy
	// OnChange is what a guarded write does when its key is done but its
	// text differs: reconcile.OnChangeAuto (default; GHONCE_ON_CHANGE sets
	// another), OnChangeWarn, OnChangeFail or OnChangeUpdate.
	OnChange string
	// Getenv reads the environment (default os.Getenv): GHONCE_TASK,
	// GHONCE_STEP, GHONCE_ON_CHANGE and GitHub Actions' variables.
	Getenv func(string) string
	// Wait is how long a write waits for another process holding the same
	// key (default 30s); Settle how long after a crashed attempt marked a
	// create as sent the engine waits before looking, on the ledger's clock
	// (default reconcile.DefaultSettle: GitHub's 10 s request limit plus a
	// margin; no wait when nothing was marked sent).
	Wait, Settle time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logf, if set, is told of the engine's waits and progress, of an
	// artifact found from an earlier attempt whose description differs
	// (a rerun that reworded the body gets the first artifact back), and
	// of a warning (labels a crash left off and could not be added).
	Logf func(format string, args ...any)
	// AnswerBeforeTags answers a pull request's create as soon as GitHub
	// answered it (two round trips: the look-up and the create); its
	// labels and the ledger's done record follow in the background
	// (reconcile.Config.AnswerBeforeTags). Call Wait before the program
	// exits. Default false: the response comes after the labels (three).
	AnswerBeforeTags bool
}

// Transport guards go-github's writes; see the package documentation. It is
// safe for concurrent use.
type Transport struct {
	base http.RoundTripper
	opts Options
	// byAuth holds one engine per API root and credential (keyed by a
	// hash, never the credential): each identity decides for itself what
	// is "ours".
	mu     sync.Mutex
	byAuth map[string]*engine
}

// engine is the engine and GitHub client for one API root and identity.
type engine struct {
	gh  *ghcheck.Client
	eng *reconcile.Engine
}

var _ http.RoundTripper = (*Transport)(nil)

// Wait waits until the labels and done records of the pull requests
// answered early (Options.AnswerBeforeTags) are written. Call it before the
// program exits.
func (t *Transport) Wait() {
	t.mu.Lock()
	es := make([]*engine, 0, len(t.byAuth))
	for _, e := range t.byAuth {
		es = append(es, e)
	}
	t.mu.Unlock()
	for _, e := range es {
		e.eng.Wait()
	}
}

// New returns a Transport that guards writes and sends everything through
// base (http.DefaultTransport when nil).
func New(base http.RoundTripper, opts Options) (*Transport, error) {
	if opts.Ledger == nil {
		return nil, errors.New("create guard: no ledger: set Options.Ledger")
	}
	if base == nil {
		base = http.DefaultTransport
	}
	if v, ok := opts.Ledger.(interface{ CannotVouch() bool }); ok && v.CannotVouch() {
		opts.LedgerNew = true
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	if opts.OnChange == "" {
		opts.OnChange = strings.TrimSpace(opts.Getenv("GHONCE_ON_CHANGE"))
	}
	switch opts.OnChange {
	case "", reconcile.OnChangeAuto, reconcile.OnChangeWarn, reconcile.OnChangeFail, reconcile.OnChangeUpdate:
	default:
		return nil, fmt.Errorf("create guard: OnChange %q (or GHONCE_ON_CHANGE): want auto, warn, fail or update", opts.OnChange)
	}
	return &Transport{base: base, opts: opts, byAuth: map[string]*engine{}}, nil
}

type stepKey struct{}

type step struct{ task, step string }

// WithStep returns ctx carrying the task and step that key the writes made
// with it. An empty step means the kind's default, the same through every
// front (the package doc lists them): two writes of one kind in one task
// need their own steps.
// The task names the work (an issue, a job), never a time or a random
// value: a rerun must carry the same one.
func WithStep(ctx context.Context, task, stepName string) context.Context {
	return context.WithValue(ctx, stepKey{}, step{task: task, step: stepName})
}

// StepFrom returns the task and step ctx carries; ok is false without a task.
func StepFrom(ctx context.Context) (task, stepName string, ok bool) {
	s, _ := ctx.Value(stepKey{}).(step)
	return s.task, s.step, strings.TrimSpace(s.task) != ""
}

// UnguardedError is the error of a write refused by Options.NoTask or
// Options.Unknown: nothing was sent.
type UnguardedError struct {
	Method, Path string
	Why          string
}

func (e *UnguardedError) Error() string {
	return fmt.Sprintf("guard %s %s: %s; nothing was sent", e.Method, e.Path, e.Why)
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	switch req.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return t.base.RoundTrip(req)
	}
	task, stepName, hasTask := StepFrom(req.Context())
	w, why := parseWrite(req)
	switch {
	case w == nil && !hasTask:
		return t.base.RoundTrip(req)
	case w == nil:
		return t.other(req, why)
	case !hasTask:
		switch t.opts.NoTask {
		case Refuse:
			return nil, t.refuse(req, "the request's context carries no task: wrap it with guard.WithStep(ctx, task, step)")
		case Pass:
			t.logf("guard: %s %s sent unguarded (Options.NoTask is Pass and its context carries no task): a rerun may make it again", req.Method, req.URL.Path)
			return t.base.RoundTrip(req)
		}
		var err error
		if task, stepName, err = t.envTask(); err != nil {
			return nil, t.refuse(req, err.Error())
		}
	}
	a, body, err := w.action(req, task, stepName)
	if err != nil {
		var nf *notGuarded
		if errors.As(err, &nf) {
			return t.other(restoreBody(req, body), nf.why)
		}
		return nil, fmt.Errorf("guard %s %s: %w", req.Method, req.URL.Path, err)
	}
	return t.guard(req, w, a)
}

// envTask is the task and step of a write whose context carries none: the
// environment's, as the CLI derives them.
func (t *Transport) envTask() (task, stepName string, err error) {
	getenv := t.opts.Getenv
	if task = strings.TrimSpace(getenv("GHONCE_TASK")); task == "" {
		if _, ok := actions.Detect(getenv); ok {
			if task, _, err = actions.DefaultTask(getenv, os.ReadFile); err != nil {
				return "", "", fmt.Errorf("%w: wrap the context with guard.WithStep(ctx, task, step) or set GHONCE_TASK", err)
			}
		}
	}
	if task == "" {
		return "", "", errors.New("no task in the context or GHONCE_TASK: use guard.WithStep(ctx, task, step), set GHONCE_TASK, or Options.NoTask = guard.Pass to send unguarded")
	}
	return task, strings.TrimSpace(getenv("GHONCE_STEP")), nil
}

func (t *Transport) logf(format string, args ...any) {
	if t.opts.Logf != nil {
		t.opts.Logf(format, args...)
		return
	}
	log.Printf(format, args...)
}

// other handles a write with a task that the Transport cannot guard.
func (t *Transport) other(req *http.Request, why string) (*http.Response, error) {
	if t.opts.Unknown == Refuse {
		return nil, t.refuse(req, why)
	}
	return t.base.RoundTrip(req)
}

func (t *Transport) refuse(req *http.Request, why string) error {
	if req.Body != nil {
		req.Body.Close()
	}
	return &UnguardedError{Method: req.Method, Path: req.URL.Path, Why: why}
}

// engineFor returns the engine for the API root and credential of req.
func (t *Transport) engineFor(req *http.Request, root string) (*engine, error) {
	auth := req.Header.Get("Authorization")
	h := sha256.Sum256([]byte(root + "\x00" + auth))
	id := hex.EncodeToString(h[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.byAuth[id]; ok {
		return e, nil
	}
	opts := ghcheck.Options{
		BaseURL:        root,
		TrustedAuthors: t.opts.TrustedAuthors,
		UserAgent:      "ghonce-guard",
		Logf:           t.opts.Logf,
		HTTPClient:     &http.Client{Transport: noCache{t.base}},
	}
	if tok, ok := bearer(auth); ok {
		opts.Token = tok
	} else if t.opts.TokenSource != nil {
		opts.TokenSource = t.opts.TokenSource
	} else {
		return nil, errors.New("the request carries no token (Authorization: Bearer or token) and Options.TokenSource is nil: give the guard its base transport's token source")
	}
	gh, err := ghcheck.New(opts)
	if err != nil {
		return nil, err
	}
	if opts.Token != "" {
		gh.UseLoginCache(reconcile.LoginCache(t.opts.Ledger))
	}
	cfg := reconcile.Config{
		Ledger: t.opts.Ledger, GitHub: gh, LedgerNew: t.opts.LedgerNew,
		Wait: t.opts.Wait, Settle: t.opts.Settle, Now: t.opts.Now, Logf: t.opts.Logf,
		AnswerBeforeTags: t.opts.AnswerBeforeTags,
	}
	if repo, id, attempt, ok := actions.RunOf(t.opts.Getenv); ok {
		cfg.Run = reconcile.Run{Repo: repo, ID: id, Attempt: attempt}
	}
	e := &engine{gh: gh, eng: reconcile.New(cfg)}
	t.byAuth[id] = e
	return e, nil
}

// bearer returns the token of an Authorization header go-github's
// WithAuthToken (Bearer) or an older client (token) set.
func bearer(auth string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(auth), " ")
	if !ok || tok == "" || !(strings.EqualFold(scheme, "bearer") || strings.EqualFold(scheme, "token")) {
		return "", false
	}
	return strings.TrimSpace(tok), true
}

// noCache marks every request the engine makes so that no HTTP cache in
// the base answers it from a stored copy: GitHub sends "private,
// max-age=60", and a look-up answered from a listing older than the write
// it looks for would call the artifact absent. It also hands GitHub's
// answer to the create a guarded write waits for to its capture.
type noCache struct{ base http.RoundTripper }

func (n noCache) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Cache-Control", "no-cache")
	r.Header.Set("Pragma", "no-cache")
	resp, err := n.base.RoundTrip(r)
	if c, ok := req.Context().Value(captureKey{}).(*capture); ok && err == nil {
		c.observe(r, resp)
	}
	return resp, err
}
