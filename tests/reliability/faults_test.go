package reliability

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/taskkey"
)

// fault is one GitHub misbehaviour, injected into a fresh fake for the
// first run of a trial.
type fault struct {
	name  string
	kinds []string // nil: every GitHub kind
	// opts are the fake's options (rate limits).
	opts func(f *faultRun) fixtures.Options
	// setup injects the fault; it runs before the first run.
	setup func(f *faultRun)
	// first is the exit code the first run must have (-1: killed).
	first int
	// creates is how many create requests the first run must have sent to
	// GitHub (-1: not checked).
	creates int
	// check verifies what the fault is about (a wait honoured, a body kept).
	check func(f *faultRun) error
	// between runs after the first run, before the reruns.
	between func(f *faultRun)
	// killOn, for a first run that is killed, says at which commit (default:
	// the create's).
	killOn func(f *faultRun, c *fixtures.Commit) bool
	// entry is the ledger status the first run must leave ("" unchecked):
	// attempting after a maybe, failed when nothing was sent.
	entry ledger.Status
}

// faultRun is one trial of one fault.
type faultRun struct {
	w     *world
	t     *trial
	k     *kind
	reads int // GET requests ghonce makes before its create (calibrated)

	mu     sync.Mutex
	seen   []seenReq // every request, as the observer saw it
	marks  map[string]time.Time
	result string
	// waited and asked: a measured wait and the least GitHub asked for.
	waited, asked time.Duration
	waitWhat      string
}

type seenReq struct {
	method, path string
	at           time.Time
	ledger       bool // a repository ledger's request (a claim ref, its commits)
}

func (f *faultRun) mark(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.marks[name]; !ok {
		f.marks[name] = time.Now()
	}
}

func (f *faultRun) markAt(name string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.marks[name]
	return t, ok
}

// observe installs a fault that never matches: its Match sees every
// request that reaches the fault stage, with the time it arrived.
func (f *faultRun) observe() {
	f.w.fake.Inject(fixtures.Fault{Kind: fixtures.Status500, Match: func(r *http.Request) bool {
		f.mu.Lock()
		f.seen = append(f.seen, seenReq{r.Method, r.URL.Path, time.Now(), isLedgerRequest(r)})
		f.mu.Unlock()
		return false
	}})
}

// creates returns the arrival times of the create requests seen.
func (f *faultRun) creates() []time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []time.Time
	if f.k.isCreate == nil {
		return nil // a guarded command: its effect is not a GitHub request
	}
	for _, s := range f.seen {
		if !s.ledger && f.k.isCreate(f.w, f.t, s.method, s.path) {
			out = append(out, s.at)
		}
	}
	return out
}

func (f *faultRun) firstSeen() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.seen) == 0 {
		return time.Time{}
	}
	return f.seen[0].at
}

// onCreate is a Fault.Match for the kind's create request that records
// when the fault answered it.
func (f *faultRun) onCreate(name string) func(*http.Request) bool {
	return func(r *http.Request) bool {
		if f.k.isCreate != nil && !isLedgerRequest(r) && f.k.isCreate(f.w, f.t, r.Method, r.URL.Path) {
			f.mark(name)
			return true
		}
		return false
	}
}

// waitAfter checks that the create that followed the mark came at least
// d later, and notes how long it was.
func (f *faultRun) waitAfter(mark string, d time.Duration) error {
	at, ok := f.markAt(mark)
	if !ok {
		return fmt.Errorf("the fault never answered")
	}
	for _, c := range f.creates() {
		if c.After(at) {
			f.waited, f.asked, f.waitWhat = c.Sub(at), d, "next create after the answer"
			if c.Sub(at) < d {
				return fmt.Errorf("retried after %s, before the %s GitHub asked for", c.Sub(at), d)
			}
			return nil
		}
	}
	return fmt.Errorf("no create after the fault")
}

// prespent is how many requests of the window the matrix spends itself
// before ghonce runs, so that ghonce's reads spend the rest and a window
// after the reset has room for a whole run.
const prespent = 20

func (f *faultRun) prespend() {
	c := &http.Client{Timeout: 10 * time.Second}
	for range prespent {
		req, _ := http.NewRequest("GET", f.w.fake.URL()+"user", nil)
		req.Header.Set("Authorization", "Bearer "+f.w.m.token)
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

func faultList() []fault {
	retryAfter := time.Second
	return []fault{
		{name: "latency: every answer 200 ms late", first: 0, creates: 1,
			setup: func(f *faultRun) { f.w.fake.SetLatency(200 * time.Millisecond) }},
		{name: "connection dropped after GitHub commits the create", first: 3, creates: 1, entry: ledger.Attempting,
			setup: func(f *faultRun) {
				f.w.fake.Inject(fixtures.Fault{Match: f.onCreate("fault"), Kind: fixtures.DropAfterCommit})
			}},
		{name: "502 on the create (before commit)", first: 3, creates: 1, entry: ledger.Attempting,
			setup: func(f *faultRun) {
				f.w.fake.Inject(fixtures.Fault{Match: f.onCreate("fault"), Kind: fixtures.Status502BeforeCommit})
			}},
		{name: "502 on the first read, then answers", first: 0, creates: 1,
			setup: func(f *faultRun) {
				f.w.fake.Inject(fixtures.Fault{Match: func(r *http.Request) bool { f.mark("fault"); return r.Method == "GET" }, Kind: fixtures.Status502BeforeCommit})
			}},
		{name: "504 after GitHub commits the create", first: 3, creates: 1, entry: ledger.Attempting,
			setup: func(f *faultRun) {
				f.w.fake.Inject(fixtures.Fault{Match: f.onCreate("fault"), Kind: fixtures.Status504AfterCommit})
			}},
		{name: "429 with Retry-After: 1 on the create", first: 0, creates: 2,
			setup: func(f *faultRun) {
				f.w.fake.Inject(fixtures.Fault{Match: f.onCreate("fault"), Kind: fixtures.Status429, RetryAfter: retryAfter})
			},
			check: func(f *faultRun) error { return f.waitAfter("fault", retryAfter) }},
		{name: "secondary limit (403, Retry-After: 1) on the create", first: 0, creates: 2,
			setup: func(f *faultRun) {
				f.w.fake.Inject(fixtures.Fault{Match: f.onCreate("fault"), Kind: fixtures.SecondaryRateLimit, RetryAfter: retryAfter})
			},
			check: func(f *faultRun) error { return f.waitAfter("fault", retryAfter) }},
		{name: "primary limit (403, remaining 0, reset in 2 s) on the create", first: 0, creates: 2,
			setup: func(f *faultRun) {
				reset := time.Now().Add(2 * time.Second)
				f.mu.Lock()
				f.marks["reset"] = time.Unix(reset.Unix()+1, 0) // x-ratelimit-reset, whole seconds rounded up
				f.mu.Unlock()
				f.w.fake.Inject(fixtures.Fault{Match: f.onCreate("fault"), Kind: fixtures.PrimaryRateLimit, Reset: reset})
			},
			check: func(f *faultRun) error {
				reset, _ := f.markAt("reset")
				at, _ := f.markAt("fault")
				return f.waitAfter("fault", reset.Sub(at))
			}},
		{name: "primary limit spent by the last read (200, remaining 0, reset in 3 s): go-github refuses the create locally", first: 0, creates: 1,
			opts: func(f *faultRun) fixtures.Options {
				return fixtures.Options{CoreLimit: f.reads + prespent, CoreWindow: 3 * time.Second}
			},
			setup: func(f *faultRun) { f.prespend() },
			check: func(f *faultRun) error {
				start := f.firstSeen()
				cs := f.creates()
				if len(cs) == 0 {
					return fmt.Errorf("no create")
				}
				wait := cs[0].Sub(start)
				f.waited, f.asked, f.waitWhat = wait, 3*time.Second, "create sent after the window began"
				if wait < 3*time.Second {
					return fmt.Errorf("create sent %s after the window began, before its reset", wait)
				}
				return nil
			}},
		{name: "primary limit spent, reset in an hour: go-github refuses the create locally; rerun after the reset", first: 1, creates: 0, entry: ledger.Failed,
			opts:  func(f *faultRun) fixtures.Options { return fixtures.Options{CoreLimit: f.reads + prespent} },
			setup: func(f *faultRun) { f.prespend() },
			between: func(f *faultRun) {
				f.w.clock.Advance(time.Hour + time.Second)
			}},
		{name: "labels differing only in case (needs-review vs Needs-Review; a stranger's issue with the key's label upper-cased); killed after GitHub commits the labels",
			kinds: []string{"pr", "issue"}, first: -1, creates: 1,
			killOn: func(f *faultRun, c *fixtures.Commit) bool {
				if f.k.name == "pr" {
					return c.Kind == fakegithub.KindLabel && c.Method == "POST" && c.Number != 0 // added to the PR
				}
				return f.k.isCreated(f.w, f.t, c)
			},
			setup: func(f *faultRun) {
				f.w.fake.SeedIssue(owner, repo, "someone", fixtures.SeedIssue{Title: "Look-alike", Body: taskkey.WithMarker(f.t.key(), "not ours"),
					Labels: []string{"Needs-Review", strings.ToUpper(taskkey.Label(f.t.key()))}})
				f.t.labels = []string{"needs-review"}
			},
			check: func(f *faultRun) error {
				var labels []string
				for _, p := range f.w.fake.PullRequests(owner, repo) {
					if taskkey.HasMarker(p.Body, f.t.key()) && p.Author == login {
						labels = p.Labels
					}
				}
				for _, is := range f.w.fake.Issues(owner, repo) {
					if taskkey.HasMarker(is.Body, f.t.key()) && is.Author == login {
						labels = is.Labels
					}
				}
				n, key := 0, false
				for _, l := range labels {
					if strings.EqualFold(l, "needs-review") {
						n++
					}
					key = key || strings.EqualFold(l, taskkey.Label(f.t.key()))
				}
				if n != 1 || !key {
					return fmt.Errorf("labels %v: want Needs-Review once and the key's label", labels)
				}
				f.result = fmt.Sprintf("%d labels: Needs-Review once, and the key's (upper-cased as the stranger's)", len(labels))
				return nil
			}},
		{name: "body of exactly 65,536 characters with the marker (multi-byte); killed after GitHub commits",
			kinds: []string{"pr", "issue", "comment"}, first: -1, creates: 1,
			setup: func(f *faultRun) {
				marker := len([]rune(taskkey.WithMarker(f.t.key(), "")))
				f.t.body = strings.Repeat("é", 30000) + strings.Repeat("日", 35536-marker) + ""
			},
			check: func(f *faultRun) error {
				var bodies []string
				for _, p := range f.w.fake.PullRequests(owner, repo) {
					bodies = append(bodies, p.Body)
				}
				for _, is := range f.w.fake.Issues(owner, repo) {
					bodies = append(bodies, is.Body)
				}
				for _, c := range f.w.fake.Comments(owner, repo, commentOn) {
					bodies = append(bodies, c.Body)
				}
				for _, b := range bodies {
					if taskkey.HasMarker(b, f.t.key()) {
						if n := len([]rune(b)); n != taskkey.MaxBody {
							return fmt.Errorf("stored body has %d characters, want %d", n, taskkey.MaxBody)
						}
						f.result = fmt.Sprintf("stored body: %d characters, %d bytes, marker intact", taskkey.MaxBody, len(b))
						return nil
					}
				}
				return fmt.Errorf("no body with the marker")
			}},
	}
}

// faults runs every fault for every kind it applies to. With sh, each
// trial's runs share that ledger from separate machines, and the repository
// ledger's own faults (ledgerFaults) run too, for every kind; the profile's
// ghFaultsAll says whether every other fault runs as well.
func (m *matrix) faults(ctx context.Context, sh *sharedLedger) ([]*row, error) {
	reads, err := m.readsBeforeCreate(ctx, sh)
	if err != nil {
		return nil, err
	}
	// Most of a fault's time is a wait GitHub asked for: run many at once.
	type job struct {
		k  *kind
		fl fault
		fi int
		r  *row
	}
	var jobs []*job
	list := faultList()
	if sh != nil {
		list = sh.faultList(m.prof.ghFaultsAll)
	}
	names := kindNames(onGitHub)
	if sh != nil { // a shared ledger's claims are GitHub requests for every kind
		names = kindNames(registered)
	}
	for _, name := range names {
		for fi, fl := range list {
			if fl.kinds == nil && !kinds[name].github || fl.kinds != nil && !slices.Contains(fl.kinds, name) {
				continue
			}
			what := fl.name
			if sh != nil {
				what += "; " + sh.label
			}
			r := newRow(name, what, "")
			r.exits = map[string]int{}
			jobs = append(jobs, &job{k: kinds[name], fl: fl, fi: fi, r: r})
		}
	}
	sem := make(chan struct{}, 12)
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for i, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			sent := map[int]int{}
			for n := 0; n < m.prof.faultRuns && errs[i] == nil; n++ {
				errs[i] = m.faultTrial(ctx, j.k, j.fl, j.fi, n, reads[j.k.name], j.r, sent, sh)
			}
			var ss []string
			for c, n := range sent {
				if len(sent) == 1 {
					ss = append(ss, fmt.Sprint(c))
				} else {
					ss = append(ss, fmt.Sprintf("%d (%d×)", c, n))
				}
			}
			slices.Sort(ss)
			j.r.ledger = strings.Join(ss, ", ")
		}()
	}
	wg.Wait()
	var rows []*row
	for _, j := range jobs {
		rows = append(rows, j.r)
	}
	return rows, errors.Join(errs...)
}

func (m *matrix) faultTrial(ctx context.Context, k *kind, fl fault, fi, n, reads int, r *row, sent map[int]int, sh *sharedLedger) error {
	f := &faultRun{k: k, reads: reads, marks: map[string]time.Time{}}
	opts := fixtures.Options{}
	if fl.opts != nil {
		opts = fl.opts(f)
	}
	w, err := m.newWorld(fmt.Sprintf("%sfault-%s-%d-%d", partPrefix(sh), k.name, fi, n), opts)
	if err != nil {
		return err
	}
	defer w.close()
	f.w = w
	f.t = &trial{k: k, task: fmt.Sprintf("%sFAULT-%s-%d-%d", taskPrefix(sh), k.name, fi, n)}
	f.t.ledger = ledgerPath(w, "ledger.db")
	if sh != nil {
		f.t.ledger = sh.loc
	}
	f.observe()
	// Branches for the PR kind are pushed before the fake counts anything.
	if k.name == "pr" {
		f.t.head(w, 0)
	}
	if fl.setup != nil {
		fl.setup(f)
	}
	f.t.after = func(i int, o *out) error {
		if i != 0 {
			return nil
		}
		w.fake.SetLatency(0)
		cs := len(f.creates())
		sent[cs]++
		first := fmt.Sprintf("exit %d", o.Exit)
		if o.Killed {
			first = "killed"
		}
		if o.Exit != 0 && !o.Killed {
			first += ": " + cause(o.Stderr)
		}
		r.mu.Lock()
		r.causes[first]++
		r.mu.Unlock()
		want := fl.first
		if want == anyExit {
			// A fault of the repository ledger's own: how the first run ends
			// is the backend's to choose (it may settle the lost answer
			// itself, or exit 3); what counts is what the trial left.
		} else if o.Killed && want != -1 || !o.Killed && o.Exit != want {
			r.errorf("%s: first run %s, want exit %d", f.t.task, first, want)
		}
		if fl.creates >= 0 && cs != fl.creates || fl.creates == atMostOne && cs > 1 {
			r.errorf("%s: first run sent %d create request(s), want %d", f.t.task, cs, fl.creates)
		}
		if fl.entry != "" {
			st, err := w.entryStatus(ctx, f.t.ledger, f.t.key())
			if err != nil {
				return err
			}
			if st != fl.entry {
				r.errorf("%s: the ledger says %s after the first run, want %s", f.t.task, st, fl.entry)
			} else {
				r.note("ledger after it: " + string(st))
			}
		}
		if fl.between != nil {
			fl.between(f)
		}
		return nil
	}
	to, err := w.runTrial(ctx, f.t, func(i int, p *proc) {
		if sh != nil {
			w.onMachine(p, i%pgMachines)
		}
		if i == 0 && fl.first == -1 {
			p.rule = &killRule{commit: func(c *fixtures.Commit) bool {
				if fl.killOn != nil {
					return fl.killOn(f, c)
				}
				return k.isCreated(w, f.t, c)
			}}
		}
	}, false, m.prof.maxAttempts)
	if err != nil {
		return err
	}
	r.add(to)
	if to.person != "" {
		r.errorf("%s: needed a person: %s", f.t.task, to.person)
	}
	if to.dups != 0 {
		r.errorf("%s: %d duplicate(s)", f.t.task, to.dups)
	}
	if fl.check != nil && to.final != nil {
		if err := fl.check(f); err != nil {
			r.errorf("%s: %v", f.t.task, err)
		} else {
			if f.result != "" {
				r.note(f.result)
			}
			if f.waitWhat != "" {
				r.mu.Lock()
				if r.waits == nil {
					r.waits = map[string][]time.Duration{}
				}
				r.waits[f.waitWhat] = append(r.waits[f.waitWhat], f.waited)
				r.waits[f.waitWhat+" (asked)"] = append(r.waits[f.waitWhat+" (asked)"], f.asked)
				r.mu.Unlock()
			}
		}
	}
	return nil
}

// readsBeforeCreate counts, per kind, the requests ghonce makes before its
// create on a clean run: the limit that leaves none for the create.
func (m *matrix) readsBeforeCreate(ctx context.Context, sh *sharedLedger) (map[string]int, error) {
	out := map[string]int{}
	for _, name := range kindNames(onGitHub) {
		k := kinds[name]
		w, err := m.newWorld(partPrefix(sh)+"calibrate-"+name, fixtures.Options{})
		if err != nil {
			return nil, err
		}
		f := &faultRun{w: w, k: k, marks: map[string]time.Time{}}
		f.t = &trial{k: k, task: taskPrefix(sh) + "CAL-" + name}
		f.t.ledger = ledgerPath(w, "ledger.db")
		if sh != nil {
			f.t.ledger = sh.loc
		}
		if k.name == "pr" {
			f.t.head(w, 0)
		}
		f.observe()
		to, err := w.runTrial(ctx, f.t, nil, false, 1)
		w.close()
		if err != nil {
			return nil, err
		}
		if to.final == nil {
			return nil, fmt.Errorf("calibrate %s: %s", name, to.person)
		}
		f.mu.Lock()
		n := 0
		for _, s := range f.seen {
			if !s.ledger && k.isCreate(w, f.t, s.method, s.path) {
				break
			}
			n++
		}
		f.mu.Unlock()
		out[name] = n
	}
	return out, nil
}

// entryStatus reads key's status from the ledger at path, read-only: a
// SQLite file, or the world's repository ("github").
func (w *world) entryStatus(ctx context.Context, path, key string) (ledger.Status, error) {
	var l ledger.Ledger
	var err error
	if path == "github" {
		l, err = w.repoLedger()
	} else {
		l, err = sqlite.Open(ctx, path, sqlite.Options{ReadOnly: true})
	}
	if err != nil {
		return "", err
	}
	defer l.Close()
	e, err := l.Get(ctx, key)
	if err != nil {
		return "", err
	}
	return e.Status, nil
}
