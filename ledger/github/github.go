package github

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/crashpoint"
	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/ledger"
)

// Namespace is where claims live by default: outside refs/heads and
// refs/tags, so they are not branches or tags.
const Namespace = "refs/ghonce/"

// Scheme is the ledger location of a repository's ledger:
// github://OWNER/REPO; "github" alone is the repository each action writes to.
const Scheme = "github"

// maxTries bounds how often one operation reads again after a racer moved
// the ref under it.
const maxTries = 32

// Options configure Open.
type Options struct {
	// Client is the GitHub layer the ledger's requests go through: its
	// token, pacing of writes and retries of reads are the ledger's.
	Client *ghcheck.Client
	// Repo is the repository the ledger lives in.
	Repo ghcheck.Repo
	// Namespace overrides Namespace (tests); it must start with "refs/"
	// and end with "/".
	Namespace string
	// Logf reports a claim ref that is skipped because it holds no claim
	// of its own key (someone who can push wrote it), once per ref; nil
	// is silent.
	Logf func(format string, args ...any)
}

// Ledger is a ledger.Ledger in a GitHub repository.
type Ledger struct {
	c    *ghcheck.Client
	repo ghcheck.Repo
	ns   string

	// records holds what each commit read or made says: a commit never
	// changes, so it is read at most once.
	records sync.Map // sha -> *record
	mu      sync.Mutex
	// tips is, per ref this process wrote, the commit it wrote last: the
	// parent of its next write, tried without reading the ref first (a
	// racer's move makes that write fail, and the ref is read again).
	tips map[string]*tip

	// me is this process's identity: what opens a holder sealed on this
	// machine (openProc), and host its host name, for messages.
	me   ledger.Proc
	host string
	// known is what this process was told of each key it claimed (a
	// claim keeps none of it): its identity and payload.
	known sync.Map // key -> *ledger.ClaimParams
	logf  func(format string, args ...any)
	// warned holds the refs Logf was told of.
	warned sync.Map
}

var _ ledger.Ledger = (*Ledger)(nil)

// Open returns the ledger in opts.Repo. It sends nothing.
func Open(opts Options) (*Ledger, error) {
	if opts.Client == nil {
		return nil, errors.New("open the repository ledger: no GitHub client")
	}
	if opts.Repo.Owner == "" || opts.Repo.Name == "" {
		return nil, errors.New("open the repository ledger: no repository: set Options.Repo")
	}
	ns := opts.Namespace
	if ns == "" {
		ns = Namespace
	}
	if !strings.HasPrefix(ns, "refs/") || !strings.HasSuffix(ns, "/") || strings.HasPrefix(ns, "refs/heads/") || strings.HasPrefix(ns, "refs/tags/") {
		return nil, fmt.Errorf("open the repository ledger: namespace %q must start with refs/, end with / and be neither refs/heads/ nor refs/tags/", ns)
	}
	host, _ := os.Hostname()
	logf := opts.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Ledger{c: opts.Client, repo: opts.Repo, ns: ns, tips: map[string]*tip{}, me: procid.Self(), host: host, logf: logf}, nil
}

// Location is the ledger's location, github://OWNER/REPO.
func (l *Ledger) Location() string { return Scheme + "://" + l.repo.String() }

// Repo is the repository the ledger lives in.
func (l *Ledger) Repo() ghcheck.Repo { return l.repo }

// ClaimsPrefix is the prefix of every claim's ref.
func (l *Ledger) ClaimsPrefix() string { return l.ns + "claims/" }

// RefOf is the ref that holds key's entry: the prefix and the first 40 hex
// digits of the key's SHA-256 (a key may hold anything; a ref name may not).
func (l *Ledger) RefOf(key string) string { return l.ClaimsPrefix() + hashName(key) }

func (l *Ledger) metaRef(name string) string { return l.ns + "meta/" + hashName(name) }

func hashName(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:20])
}

// tip is a ref as read: the commit it points at ("" when the ref does not
// exist), what that commit says as this process sees it (rec: its holder
// opened, its identity completed) and as it is written (raw), and GitHub's
// clock at the answer.
type tip struct {
	sha      string
	rec, raw *record
	date     time.Time
}

// errMoved: the ref is not where the write assumed; read it again.
var errMoved = errors.New("the ref moved")

// read reads ref and the commit it points at.
func (l *Ledger) read(ctx context.Context, ref string) (*tip, error) {
	sha, date, err := l.c.ReadRef(ctx, l.repo, ref)
	if err != nil {
		return nil, l.explain("read the ledger", err)
	}
	t := &tip{sha: sha, date: date}
	if sha == "" {
		return t, nil
	}
	if t.raw, err = l.record(ctx, sha); err == nil {
		t.rec, err = l.view(ref, t.raw)
	}
	if err != nil {
		return nil, l.unreadable(ref, err)
	}
	if date.IsZero() {
		return nil, fmt.Errorf("%w: read %s of %s: GitHub's answer had no Date, and the ledger keeps GitHub's time", ledger.ErrUnavailable, ref, l.repo)
	}
	return t, nil
}

// record reads what commit sha says, once.
func (l *Ledger) record(ctx context.Context, sha string) (*record, error) {
	if r, ok := l.records.Load(sha); ok {
		return r.(*record), nil
	}
	cm, err := l.c.GetGitCommit(ctx, l.repo, sha)
	if st := status(err); st == http.StatusNotFound || st == http.StatusUnprocessableEntity {
		// The ref exists (it was just read) and names no commit.
		return nil, fmt.Errorf("%w: %s is not a commit", ledger.ErrNotLedger, sha)
	}
	if err != nil {
		return nil, l.explain("read the ledger", err)
	}
	r, err := decode(cm.Message, cm.Date)
	if err != nil {
		return nil, fmt.Errorf("read commit %s of %s: %w", sha, l.repo, err)
	}
	l.records.Store(sha, r)
	return r, nil
}

// view is raw, the record of the commit at ref, as this process sees it:
// an error when it is not the claim of ref's own key (a claim copied to
// another key's ref); else a copy whose holder and in-flight command are
// opened when they were sealed on this machine, and whose identity and
// payload are those this process claimed the key with (a claim keeps
// neither).
func (l *Ledger) view(ref string, raw *record) (*record, error) {
	e := clone(raw.entry)
	if l.RefOf(e.Key) != ref {
		return nil, fmt.Errorf("%w: it names another key, %.60q", ledger.ErrNotLedger, e.Key)
	}
	if p := openProc(raw.holderProc, l.me); !p.IsZero() {
		e.Owner.Host, e.Owner.PID, e.Owner.Boot, e.Owner.PIDNS, e.Owner.Start = l.host, p.PID, p.Boot, p.PIDNS, p.Start
	} else if e.Owner.Boot != l.me.Boot || l.me.Boot == "" {
		// A format 1 holder of another machine: its host and process are
		// what the claim says, which proves nothing; they are not shown.
		e.Owner = ledger.Owner{ID: e.Owner.ID}
	}
	if raw.sendingBy != "" {
		// A mark that names a process (a guarded command's supervisor)
		// still names one when only its own machine can read it: nothing
		// here can prove it gone.
		e.Sending.Proc = elsewhere
		if p := openProc(raw.sendingBy, l.me); !p.IsZero() {
			e.Sending.Proc = p
		}
	}
	if v, ok := l.known.Load(e.Key); ok {
		k := v.(*ledger.ClaimParams)
		e.Task, e.Step, e.Kind, e.Repo, e.Target = k.Task, k.Step, k.Kind, k.Repo, k.Target
		e.Payload = nil
		if k.PayloadHash == e.PayloadHash {
			e.Payload = slices.Clone(k.Payload)
		}
	}
	v := *raw
	v.entry = e
	return &v, nil
}

// unreadable is the error of a claim ref that holds no claim of its own
// key: someone who can push wrote it. It blocks that key alone, until a
// person removes it.
func (l *Ledger) unreadable(ref string, err error) error {
	if errors.Is(err, ledger.ErrUnavailable) || errors.Is(err, ledger.ErrNewerSchema) {
		return err
	}
	return fmt.Errorf("%s of %s holds no claim of its key (%w): someone who can push wrote it, and nothing was done for the key. "+
		"Check it, then remove it: `ghonce prune KEY`", ref, l.repo, err)
}

// skip reports, once, a claim ref that List and Prune leave out.
func (l *Ledger) skip(ref string, err error) {
	if _, told := l.warned.LoadOrStore(ref, true); !told {
		l.logf("skipped %s of %s: %v; the other claims are read as usual. Remove it once checked: `git push origin :%s`", ref, l.repo, err, ref)
	}
}

// put writes e and history as the new tip of ref over parent (nil creates
// the ref). It returns errMoved when the ref is not at parent any more
// (or, for a create, exists), so that the caller reads and decides again.
func (l *Ledger) put(ctx context.Context, ref string, parent *tip, e *ledger.Entry, history []ledger.Transition) (*tip, error) {
	return l.putHit(ctx, ref, parent, e, history, "")
}

// putHit is put with the crash point at (crashpoint.Hit) between the
// commit and the ref's move: everything is written, nothing is in effect.
func (l *Ledger) putHit(ctx context.Context, ref string, over *tip, e *ledger.Entry, history []ledger.Transition, at string) (*tip, error) {
	parent := ""
	var prev *record
	if over != nil {
		parent, prev = over.sha, over.raw
	}
	msg := encode(e, history, prev)
	var parents []string
	if parent != "" {
		parents = []string{parent}
	}
	cm, err := l.c.CreateGitCommit(ctx, l.repo, msg, parents)
	if err != nil {
		// A commit no ref points at changes nothing: any failure here
		// left the ledger as it was.
		return nil, l.explain("write the ledger", err)
	}
	rec, err := decode(msg, cm.Date)
	if err != nil {
		return nil, fmt.Errorf("write the ledger in %s: %w", l.repo, err)
	}
	if cm.Date.IsZero() {
		return nil, fmt.Errorf("%w: write the ledger in %s: GitHub's commit has no date", ledger.ErrUnavailable, l.repo)
	}
	l.records.Store(cm.SHA, rec)
	raw := rec
	if rec, err = l.view(ref, raw); err != nil {
		return nil, fmt.Errorf("write the ledger in %s: %w", l.repo, err)
	}
	if at != "" {
		crashpoint.Hit(at)
	}
	// A write GitHub did not take (its answer lost, the ref unchanged) is
	// sent once more, the same commit; a second such failure ends the
	// operation unavailable rather than writing again and again against a
	// GitHub that fails them (each write is paced: a ref that kept
	// answering 502 held a run for minutes).
	for sent := 1; ; sent++ {
		t, again, err := l.moveTo(ctx, ref, parent, cm.SHA, &tip{sha: cm.SHA, rec: rec, raw: raw, date: cm.Date}, sent < 2)
		if !again {
			return t, err
		}
	}
}

// moveTo points ref at sha (created when parent is ""), settling a lost
// answer by reading the ref back. again: GitHub did not take the write and
// mayRetry allowed sending it once more.
func (l *Ledger) moveTo(ctx context.Context, ref, parent, sha string, t *tip, mayRetry bool) (_ *tip, again bool, _ error) {
	var err error
	if parent == "" {
		err = l.c.CreateRefAt(ctx, l.repo, ref, sha)
	} else {
		err = l.c.MoveRef(ctx, l.repo, ref, sha)
	}
	var ce *ghcheck.CreateError
	switch {
	case err == nil:
	case errors.Is(err, ghcheck.ErrNotFastForward):
		return nil, false, errMoved
	case errors.As(err, &ce) && ce.Class == ghcheck.ClassExists:
		return nil, false, errMoved
	case parent == "" && errors.As(err, &ce) && ce.Class == ghcheck.ClassRefused && status(err) == http.StatusUnprocessableEntity:
		return nil, false, &effect.AdviceError{
			Err:    fmt.Errorf("create %s in %s: GitHub refused the ref (%w): this host does not take refs outside refs/heads and refs/tags, so it cannot hold the ledger", ref, l.repo, err),
			Option: effect.Option{Name: "ledger"}, Step: "nothing was claimed: keep the ledger in a SQLite file or Postgres instead (%s)",
		}
	case parent != "" && status(err) == http.StatusUnprocessableEntity:
		// "Reference does not exist": pruned or deleted meanwhile.
		return nil, false, errMoved
	case errors.As(err, &ce) && (ce.Class == ghcheck.ClassMaybe || ce.Class == ghcheck.ClassNotSent):
		// The answer was lost: the ref says whether the write happened,
		// since the commit is ours alone.
		at, _, rerr := l.c.ReadRef(ctx, l.repo, ref)
		switch {
		case rerr != nil:
			return nil, false, fmt.Errorf("%w: write %s in %s: %w; and reading it back failed: %w", ledger.ErrUnavailable, ref, l.repo, err, rerr)
		case at == parent && mayRetry:
			return nil, true, nil
		case at == parent:
			// Should it still land, it is this process's own record,
			// which a later write fast-forwards over or a takeover reads
			// like any other.
			return nil, false, fmt.Errorf("%w: write %s in %s: %w; sent twice, the ref is where it was: GitHub has not taken the write", ledger.ErrUnavailable, ref, l.repo, err)
		case at != sha:
			return nil, false, errMoved
		}
	default:
		return nil, false, l.explain("write the ledger", err)
	}
	l.remember(ref, t)
	return t, false, nil
}

func (l *Ledger) remember(ref string, t *tip) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t == nil {
		delete(l.tips, ref)
		return
	}
	l.tips[ref] = t
}

func (l *Ledger) cached(ref string) *tip {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tips[ref]
}

func status(err error) int {
	var re *ghcheck.ResponseError
	if errors.As(err, &re) {
		return re.StatusCode
	}
	return 0
}

// explain turns a failed request into what a user can act on: a token
// that may not write, a repository it cannot see, or GitHub out of reach
// (ledger.ErrUnavailable: the write may or may not have happened).
func (l *Ledger) explain(what string, err error) error {
	if ghcheck.IsRateLimit(err) {
		// A 403 or 429 of a rate limit says nothing of permissions.
		return fmt.Errorf("%w: %s in %s: %w", ledger.ErrUnavailable, what, l.repo, err)
	}
	switch status(err) {
	case http.StatusUnauthorized:
		return fmt.Errorf("%s in %s: GitHub refused the token (%w): check GH_TOKEN or GITHUB_TOKEN", what, l.repo, err)
	case http.StatusForbidden:
		return fmt.Errorf("%s in %s: the token cannot write refs: grant contents: write (%s); the ledger's claims are refs under %s, and GitHub answered: %w", what, l.repo, grantContentsWrite, l.ns, err)
	case http.StatusNotFound:
		return &effect.AdviceError{
			Err:    fmt.Errorf("%s in %s: GitHub answered 404 (%w): the repository does not exist or this token cannot see it", what, l.repo, err),
			Option: effect.Option{Name: "repo"}, Step: "check %s, or the github://OWNER/REPO ledger location",
		}
	}
	return fmt.Errorf("%w: %s in %s: %w", ledger.ErrUnavailable, what, l.repo, err)
}

// grantContentsWrite is where a token gets contents: write.
const grantContentsWrite = "in a workflow: `permissions: contents: write`; for a fine-grained token: Contents, read and write"

func clone(e *ledger.Entry) *ledger.Entry {
	c := *e
	c.Payload = slices.Clone(e.Payload)
	return &c
}

// Claim implements ledger.Ledger.
func (l *Ledger) Claim(ctx context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	ref := l.RefOf(p.Key)
	l.known.Store(p.Key, &p)
	for range maxTries {
		t, err := l.read(ctx, ref)
		if err != nil {
			return nil, err
		}
		if t.sha == "" {
			e := &ledger.Entry{
				Key: p.Key, Task: p.Task, Step: p.Step, Kind: p.Kind, Repo: p.Repo, Target: p.Target,
				Payload: p.Payload, PayloadHash: p.PayloadHash, Status: ledger.Attempting,
				Owner: p.Owner, LeaseUntil: self.Add(p.Lease), Fence: 1, Attempts: 1, CreatedAt: self, UpdatedAt: self,
			}
			if p.Sending {
				// The claim is the in-flight mark too: one write, not two,
				// before a first create (ledger.ClaimParams.Sending).
				e.Sending.At = self
			}
			h := []ledger.Transition{{At: self, Owner: p.Owner.ID, To: ledger.Attempting, Fence: 1, Why: p.Why}}
			nt, err := l.put(ctx, ref, nil, e, h)
			if errors.Is(err, errMoved) {
				continue
			}
			if err != nil {
				return nil, err
			}
			return &ledger.Claim{State: ledger.ClaimCreated, Entry: clone(nt.rec.entry), Now: nt.date}, nil
		}
		e := clone(t.rec.entry)
		if s := ledger.Settled(e, t.date, p.TakeOverFence); s != nil {
			s.Now = t.date
			return s, nil
		}
		prior, priorUpdated := e.Status, e.UpdatedAt
		e.Status, e.Owner, e.LeaseUntil, e.UpdatedAt = ledger.Attempting, p.Owner, self.Add(p.Lease), self
		e.Fence++
		e.Attempts++
		h := append(slices.Clone(t.rec.history), ledger.Transition{At: self, Owner: p.Owner.ID, From: prior, To: ledger.Attempting, Fence: e.Fence, Why: p.Why})
		nt, err := l.put(ctx, ref, t, e, h)
		if errors.Is(err, errMoved) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &ledger.Claim{State: ledger.ClaimAcquired, Entry: clone(nt.rec.entry), Prior: prior, PriorUpdatedAt: priorUpdated, Now: nt.date}, nil
	}
	return nil, l.tooBusy("claim", p.Key)
}

func (l *Ledger) tooBusy(what, key string) error {
	return fmt.Errorf("%w: %s %s in %s: the ref moved under %d writes in a row; try again", ledger.ErrUnavailable, what, key, l.repo, maxTries)
}

// update writes the change change makes to key's entry, over the tip this
// process wrote last if it has one (else over a fresh read), reading and
// deciding again when a racer moved the ref. change returns the new entry
// and whether it adds a transition (appended to the history as is).
func (l *Ledger) update(ctx context.Context, key string, fresh bool, change func(t *tip) (*ledger.Entry, *ledger.Transition, error)) (*tip, error) {
	return l.updateHit(ctx, key, fresh, "", change)
}

// updateHit is update with the crash point at before the ref moves.
func (l *Ledger) updateHit(ctx context.Context, key string, fresh bool, at string, change func(t *tip) (*ledger.Entry, *ledger.Transition, error)) (*tip, error) {
	ref := l.RefOf(key)
	for range maxTries {
		t := l.cached(ref)
		if t == nil || fresh {
			var err error
			if t, err = l.read(ctx, ref); err != nil {
				return nil, err
			}
		}
		if t.sha == "" {
			return nil, ledger.ErrNotFound
		}
		e, tr, err := change(t)
		if err != nil {
			return nil, err
		}
		h := t.rec.history
		if tr != nil {
			tr.Key = key
			h = append(slices.Clone(h), *tr)
		}
		nt, err := l.putHit(ctx, ref, t, e, h, at)
		if errors.Is(err, errMoved) {
			l.remember(ref, nil)
			fresh = true
			continue
		}
		return nt, err
	}
	return nil, l.tooBusy("write", key)
}

// Get implements ledger.Ledger.
func (l *Ledger) Get(ctx context.Context, key string) (*ledger.Entry, error) {
	t, err := l.read(ctx, l.RefOf(key))
	if err != nil {
		return nil, err
	}
	if t.sha == "" {
		return nil, ledger.ErrNotFound
	}
	return clone(t.rec.entry), nil
}

// History implements ledger.Ledger.
func (l *Ledger) History(ctx context.Context, key string) ([]ledger.Transition, error) {
	t, err := l.read(ctx, l.RefOf(key))
	if err != nil || t.sha == "" {
		return nil, err
	}
	return slices.Clone(t.rec.history), nil
}

// Finish implements ledger.Ledger. It always writes before it returns:
// the record is in the repository, where a crash of this machine cannot
// lose it.
func (l *Ledger) Finish(ctx context.Context, p ledger.FinishParams) (*ledger.Entry, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	// The reliability matrix's kill point "while done is being written":
	// the commit is made, the ref not yet moved.
	t, err := l.updateHit(ctx, p.Key, false, crashpoint.InFinish, func(t *tip) (*ledger.Entry, *ledger.Transition, error) {
		e := clone(t.rec.entry)
		if err := ledger.Holds(e, p.Fence); err != nil {
			return nil, nil, err
		}
		owner := e.Owner.ID
		if p.Status == ledger.Done {
			e.Outcome, e.Ref = p.Outcome, p.Ref
		}
		e.Status, e.LastError, e.Owner, e.LeaseUntil, e.UpdatedAt = p.Status, p.Error, ledger.Owner{}, time.Time{}, p.UpdatedAt(self)
		if p.Status != ledger.Attempting || p.Unsent && e.Fence == 1 {
			e.Sending = ledger.Sending{}
		}
		return e, &ledger.Transition{At: self, Owner: owner, From: ledger.Attempting, To: p.Status, Fence: e.Fence, Why: p.Why}, nil
	})
	if err != nil {
		return nil, err
	}
	return clone(t.rec.entry), nil
}

// SetPayload implements ledger.Ledger.
func (l *Ledger) SetPayload(ctx context.Context, p ledger.PayloadParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	if v, ok := l.known.Load(p.Key); ok {
		k := *v.(*ledger.ClaimParams)
		k.Payload, k.PayloadHash = slices.Clone(p.Payload), p.PayloadHash
		l.known.Store(p.Key, &k)
	}
	_, err := l.update(ctx, p.Key, false, func(t *tip) (*ledger.Entry, *ledger.Transition, error) {
		e := clone(t.rec.entry)
		if err := p.Allows(e); err != nil {
			return nil, nil, err
		}
		e.Payload, e.PayloadHash, e.UpdatedAt = slices.Clone(p.Payload), p.PayloadHash, self
		return e, &ledger.Transition{At: self, Owner: e.Owner.ID, From: e.Status, To: e.Status, Fence: e.Fence, Why: p.Why}, nil
	})
	return err
}

// Renew implements ledger.Ledger.
func (l *Ledger) Renew(ctx context.Context, key string, fence int64, lease time.Duration) error {
	if err := ledger.ValidateRenew(key, lease); err != nil {
		return err
	}
	_, err := l.update(ctx, key, false, func(t *tip) (*ledger.Entry, *ledger.Transition, error) {
		e := clone(t.rec.entry)
		if err := ledger.Holds(e, fence); err != nil {
			return nil, nil, err
		}
		e.UpdatedAt, e.LeaseUntil = self, self.Add(lease)
		return e, nil, nil
	})
	return err
}

// MarkSending implements ledger.Ledger: the mark is in the repository, so
// a runner that starts on an empty disk while this one's create is in
// flight sees it and waits out GitHub's window from its time.
func (l *Ledger) MarkSending(ctx context.Context, p ledger.SendingParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	_, err := l.update(ctx, p.Key, false, func(t *tip) (*ledger.Entry, *ledger.Transition, error) {
		e := clone(t.rec.entry)
		if err := ledger.Holds(e, p.Fence); err != nil {
			return nil, nil, err
		}
		e.UpdatedAt, e.LeaseUntil = self, self.Add(p.Lease)
		e.Sending = ledger.Sending{At: self, Proc: p.Proc}
		return e, nil, nil
	})
	return err
}

// Resolve implements ledger.Ledger. It judges the lease on a fresh read.
func (l *Ledger) Resolve(ctx context.Context, p ledger.ResolveParams) (*ledger.Entry, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	t, err := l.update(ctx, p.Key, true, func(t *tip) (*ledger.Entry, *ledger.Transition, error) {
		e := clone(t.rec.entry)
		ref, err := p.Apply(e, t.date)
		if err != nil {
			return nil, nil, err
		}
		from := e.Status
		e.Status, e.Outcome, e.Ref = p.Status, "resolved", ref
		e.Owner, e.LeaseUntil, e.UpdatedAt, e.Sending = ledger.Owner{}, time.Time{}, self, ledger.Sending{}
		return e, &ledger.Transition{At: self, Owner: "person:" + p.Who, From: from, To: p.Status, Fence: e.Fence, Why: p.Note}, nil
	})
	if err != nil {
		return nil, err
	}
	return clone(t.rec.entry), nil
}

// List implements ledger.Ledger: every claim ref (matching-refs answers
// all of them at once), each commit read once.
func (l *Ledger) List(ctx context.Context, p ledger.ListParams) ([]*ledger.Entry, error) {
	all, err := l.entries(ctx)
	if err != nil {
		return nil, err
	}
	// A claim names no task or repository, only their digests.
	var entries []*ledger.Entry
	for _, ce := range all {
		if (p.Task == "" || ce.digests.task == digest("task", p.Task)) && (p.Repo == "" || ce.digests.repo == digest("repo", strings.ToLower(p.Repo))) {
			entries = append(entries, ce.entry)
		}
	}
	p.Task, p.Repo = "", ""
	out := p.Select(entries)
	for i, e := range out {
		out[i] = clone(e)
	}
	return out, nil
}

// claimed is one claim ref and its entry.
type claimed struct {
	ref, sha string
	entry    *ledger.Entry
	digests  digests
}

// entries reads every claim in the namespace, a few commits at a time.
func (l *Ledger) entries(ctx context.Context) ([]claimed, error) {
	refs, err := l.c.MatchingRefs(ctx, l.repo, l.ClaimsPrefix())
	if err != nil {
		return nil, l.explain("list the ledger", err)
	}
	out := make([]claimed, len(refs))
	errs := make([]error, len(refs))
	sem := make(chan struct{}, 4)
	var wg sync.WaitGroup
	for i, r := range refs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			rec, err := l.record(ctx, r.SHA)
			if err == nil {
				rec, err = l.view(r.Ref, rec)
			}
			switch {
			case errors.Is(err, ledger.ErrUnavailable):
				errs[i] = fmt.Errorf("%s: %w", r.Ref, err)
			case err != nil:
				// Not a claim of its own key: it says nothing of the
				// others, which are read as usual.
				l.skip(r.Ref, err)
			default:
				out[i] = claimed{ref: r.Ref, sha: r.SHA, entry: rec.entry, digests: rec.digests}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(c claimed) bool { return c.entry == nil }), nil
}

// Now implements ledger.Ledger: GitHub's clock, the Date of its answer.
func (l *Ledger) Now(ctx context.Context) (time.Time, error) {
	t, err := l.c.GitHubNow(ctx, l.repo)
	if err != nil {
		return time.Time{}, l.explain("read GitHub's clock", err)
	}
	return t, nil
}

// Close implements ledger.Ledger; the ledger holds nothing open.
func (l *Ledger) Close() error { return nil }
