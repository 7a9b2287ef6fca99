package reliability

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/tests/harness"
)

// The other-PID-namespace part ("pidns"): the holder of a key runs in a PID
// namespace of its own (`unshare --pid --fork --mount-proc`), as in a
// container with host networking: the same host name, the same ledger
// (file or Postgres), other PIDs. The holder's PID there is one that names
// no process in this namespace, where a rerun of the same command runs:
// the case in which a rule of "same host name and kill(pid, 0) fails" took
// a live holder for gone. Its rows:
//
//   - live: the holder is held with its create in flight (the fake's
//     BeforeWrite hook) while the rerun here waits nsRacerWait, longer than
//     the holder's lease, which the holder renews. The rerun must exit 4
//     (in progress elsewhere) without a write and without taking the entry;
//     then the holder's create lands and it exits 0.
//   - dead: the holder is killed with its create in flight, which GitHub
//     then commits. The rerun here cannot prove it gone: it must take the
//     entry over only once its lease has ended (the ledger's history dates
//     the takeover), and find the issue.
//
// The kind is an issue: GitHub keeps nothing single for it, so a takeover
// of a live holder shows as a second issue. The holder runs with a lease of
// nsLease (GHONCE_CRASH_LEASE, read only by the crash-point build).

// The ledger column of the part's rows: both processes use one ledger.
const (
	nsSQLiteLabel = "one SQLite file"
	nsPGLabel     = "one Postgres ledger"
)

const (
	// nsLease is the holder's lease. The holder renews it every quarter of
	// it, so a renewal may come up to three quarters late before a live
	// holder's lease ends: 3 seconds, which a process on a loaded 2-core
	// machine (load 8 and more) must not take as a given. (A 2-second
	// lease left 1.5.)
	nsLease = 4 * time.Second
	// nsRacerWait is the live row's rerun's --wait: two and a half leases,
	// so it outlasts the lease the holder had when it began.
	nsRacerWait = 10 * time.Second
	// nsTakeoverWait is the dead row's reruns' --wait: time for the dead
	// holder's lease to end even on a loaded machine.
	nsTakeoverWait = 5 * nsLease
)

// nsScript runs "$@" in the new namespace as a child of its init (sh), so
// that it gets the PID after $0: it is the one process that namespace
// starts.
const nsScript = `echo "$0" > /proc/sys/kernel/ns_last_pid && "$@"; exit $?`

// pidnsUnavailable says why this machine cannot run the part ("" when it
// can): PID namespaces need Linux, unshare(1) and root (CAP_SYS_ADMIN).
func pidnsUnavailable(ctx context.Context) string {
	if runtime.GOOS != "linux" {
		return "PID namespaces exist only on Linux"
	}
	bin, err := exec.LookPath("unshare")
	if err != nil {
		return "unshare(1) (util-linux) is not on PATH"
	}
	args := append(nsArgs(42), "/bin/sh", "-c", `echo $$`)
	b, err := exec.CommandContext(ctx, bin, args[1:]...).CombinedOutput()
	if got := strings.TrimSpace(string(b)); err != nil || got != "42" {
		why := got
		if err != nil {
			why = fmt.Sprintf("%v: %s", err, firstLine(got))
		}
		return fmt.Sprintf("`unshare --pid --fork --mount-proc` with a chosen PID failed (%s); it needs root (CAP_SYS_ADMIN)", why)
	}
	return ""
}

// nsArgs is the wrapper that runs a command in a new PID namespace (and
// the mount namespace its /proc needs) with PID pid.
func nsArgs(pid int) []string {
	return []string{"unshare", "--pid", "--fork", "--mount-proc", "--kill-child", "/bin/sh", "-c", nsScript, strconv.Itoa(pid - 1)}
}

// freePID returns a PID that names no process in this namespace now.
func freePID() (int, error) {
	b, err := os.ReadFile("/proc/sys/kernel/pid_max")
	if err != nil {
		return 0, err
	}
	top, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || top < 2000 {
		return 0, fmt.Errorf("pid_max %q: want at least 2000", strings.TrimSpace(string(b)))
	}
	for range 1000 {
		n := 1000 + rand.IntN(top-2000)
		if !pidHere(n) {
			return n, nil
		}
	}
	return 0, errors.New("no free PID found in 1000 tries")
}

// pidHere reports whether pid names a process in this PID namespace.
func pidHere(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return !errors.Is(err, fs.ErrNotExist)
}

// nsPart is the part's rows on ledgerAt's ledger (label names it).
type nsPart struct {
	name, label string
	runs        int
	ledgerAt    func(w *world, file string) string
}

func (m *matrix) pidnsRows(ctx context.Context, np nsPart) ([]*row, error) {
	w, err := m.newWorld(np.name, fixtures.Options{})
	if err != nil {
		return nil, err
	}
	defer w.close()
	k := kinds["issue"]
	live := newRow(k.name, fmt.Sprintf("live holder in another PID namespace, held with its create in flight; a rerun here meanwhile (--wait %s, the holder's lease %s)", nsRacerWait, nsLease), np.label)
	dead := newRow(k.name, fmt.Sprintf("holder in another PID namespace killed with its create in flight, which GitHub then commits; rerun here (--wait %s, the holder's lease %s)", nsTakeoverWait, nsLease), np.label)
	st := &nsStats{exits: map[string]int{}}
	for n := range np.runs {
		if err := w.nsLiveTrial(ctx, live, st, np, n); err != nil {
			return nil, err
		}
		if err := w.nsDeadTrial(ctx, dead, st, np, n); err != nil {
			return nil, err
		}
	}
	expect(live, k)
	expect(dead, k)
	live.note("the reruns here: " + countList(st.exits))
	live.note(fmt.Sprintf("the holder renewed its lease during the rerun in %d of %d trials", st.renewed, live.runs))
	dead.note(fmt.Sprintf("taken over after the dead holder's lease ended in %d of %d trials, %s after it at most", st.afterLease, dead.runs, st.lateMax.Round(time.Millisecond)))
	for i, r := range []*row{live, dead} {
		r.note(fmt.Sprintf("the holder's PID in its namespace named no process here in %d of %d trials", st.freeHere[i], r.runs))
	}
	return []*row{live, dead}, nil
}

type nsStats struct {
	exits      map[string]int
	renewed    int
	afterLease int
	lateMax    time.Duration
	freeHere   [2]int // live, dead
}

// nsHold runs a killRule's hold (in the fake's handler) and lets the
// trial, once the held run has ended, wait for the hold to return.
type nsHold struct{ started, done chan struct{} }

func newNSHold() *nsHold { return &nsHold{started: make(chan struct{}), done: make(chan struct{})} }

func (h *nsHold) run(fn func()) func() {
	return func() {
		close(h.started)
		defer close(h.done)
		fn()
	}
}

// wait waits for the hold to return, if it began, and reports whether it
// did. The held process cannot end before the hold began (it waits for
// its answer, or the hold kills it), so a hold not begun never will.
func (h *nsHold) wait() bool {
	select {
	case <-h.started:
		<-h.done
		return true
	default:
		return false
	}
}

// inNamespace runs p in a new PID namespace with PID pid and the short
// lease.
func inNamespace(p *proc, pid int) {
	p.wrap = nsArgs(pid)
	p.env = append(p.env, "GHONCE_CRASH_LEASE="+nsLease.String())
}

func (w *world) nsLiveTrial(ctx context.Context, r *row, st *nsStats, np nsPart, n int) error {
	k := kinds["issue"]
	t := &trial{k: k, task: fmt.Sprintf("NS-%s-live-%d", np.name, n)}
	t.ledger = np.ledgerAt(w, fmt.Sprintf("ns-live-%d.db", n))
	pid, err := freePID()
	if err != nil {
		return err
	}
	var holdErr error
	h := newNSHold()
	held := false
	t.after = func(i int, _ *out) error {
		if i == 0 {
			held = h.wait()
		}
		return nil
	}
	to, err := w.runTrial(ctx, t, func(i int, p *proc) {
		if i != 0 {
			return
		}
		inNamespace(p, pid)
		p.rule = &killRule{write: func(pw *fixtures.PendingWrite) bool { return k.isCreate(w, t, pw.Method, pw.Path) }, hold: h.run(func() {
			holdErr = w.nsLiveRerun(ctx, r, st, t, pid)
		})}
	}, false, w.m.prof.maxAttempts)
	if err != nil {
		return err
	}
	if holdErr != nil {
		return holdErr
	}
	if !held {
		r.errorf("%s: the holder never sent its create (exit %d: %s)", t.task, to.outs[0].Exit, cause(to.outs[0].Stderr))
	}
	if len(to.outs) > 0 && (to.outs[0].Exit != 0 || to.outs[0].Res == nil || to.outs[0].Res.Outcome != "created") {
		r.errorf("%s: the holder did not create its issue once released: exit %d: %s", t.task, to.outs[0].Exit, cause(to.outs[0].Stderr))
	}
	r.add(to)
	r.procs++ // the rerun here
	return nil
}

// nsLiveRerun runs the command here while the holder t's first run, in
// another namespace with PID pid, is held with its create in flight.
func (w *world) nsLiveRerun(ctx context.Context, r *row, st *nsStats, t *trial, pid int) error {
	before, err := nsEntry(ctx, t.ledger, t.key())
	if err != nil {
		return err
	}
	checkNSHolder(r, t, before.Owner, pid)
	if !pidHere(pid) {
		st.freeHere[0]++
	}
	_, writes := w.counts()
	o, err := w.run(ctx, proc{args: append(t.fullArgs(t.k.args(w, t, 1)), "--wait", nsRacerWait.String()), aside: true})
	if err != nil {
		return err
	}
	ws := w.writesSince(writes)
	after, err := nsEntry(ctx, t.ledger, t.key())
	if err != nil {
		return err
	}
	now, err := nsNow(ctx, t.ledger)
	if err != nil {
		return err
	}
	st.exits[fmt.Sprintf("exit %d", o.Exit)]++
	if o.Exit != 4 || !strings.Contains(o.Stderr, "in progress elsewhere") {
		r.errorf("%s: the rerun here did not wait for the live holder in another PID namespace: exit %d: %s", t.task, o.Exit, cause(o.Stderr))
	}
	if len(ws) > 0 {
		r.errorf("%s: the rerun here sent %d write request(s) while the holder lived (%s %s)", t.task, len(ws), ws[0].method, ws[0].path)
	}
	if after.Fence != before.Fence || after.Owner.ID != before.Owner.ID {
		r.errorf("%s: the rerun here took the entry from the live holder (fence %d → %d, owner %s)", t.task, before.Fence, after.Fence, after.Owner.ID)
	}
	if !now.After(before.LeaseUntil) {
		r.errorf("%s: the rerun here ended within the holder's first lease, so it never saw the lease renewed", t.task)
	}
	if after.LeaseUntil.After(before.LeaseUntil) {
		st.renewed++
	} else {
		r.errorf("%s: the live holder did not renew its lease while the rerun waited", t.task)
	}
	return nil
}

func (w *world) nsDeadTrial(ctx context.Context, r *row, st *nsStats, np nsPart, n int) error {
	k := kinds["issue"]
	t := &trial{k: k, task: fmt.Sprintf("NS-%s-dead-%d", np.name, n)}
	t.ledger = np.ledgerAt(w, fmt.Sprintf("ns-dead-%d.db", n))
	pid, err := freePID()
	if err != nil {
		return err
	}
	var holdErr error
	var last *ledger.Entry // the dead holder's entry: its lease as it left it
	h := newNSHold()
	t.after = func(i int, o *out) error {
		if i == 0 && h.wait() && last != nil {
			o.Killed = true // its init (sh) reports 137
		}
		return nil
	}
	to, err := w.runTrial(ctx, t, func(i int, p *proc) {
		if i != 0 {
			p.args = append(p.args, "--wait", nsTakeoverWait.String())
			return
		}
		inNamespace(p, pid)
		p.rule = &killRule{write: func(pw *fixtures.PendingWrite) bool { return k.isCreate(w, t, pw.Method, pw.Path) }, hold: h.run(func() {
			last, holdErr = w.nsKill(ctx, r, st, t, pid)
		})}
	}, false, w.m.prof.maxAttempts)
	if err != nil {
		return err
	}
	if holdErr != nil {
		return holdErr
	}
	checkKilledFirst(r, t, to)
	r.add(to)
	if last == nil {
		return nil
	}
	hist, err := nsHistory(ctx, t.ledger, t.key())
	if err != nil {
		return err
	}
	var took *ledger.Transition
	for i := range hist {
		if hist[i].Fence == last.Fence+1 && hist[i].To == ledger.Attempting {
			took = &hist[i]
			break
		}
	}
	switch {
	case took == nil:
		r.errorf("%s: no takeover of the dead holder's entry (fence %d) was recorded", t.task, last.Fence)
	case took.At.Before(last.LeaseUntil) || strings.Contains(took.Why, "process gone"):
		r.errorf("%s: taken over %s before the dead holder's lease ended (%q): a PID of another namespace was taken as proof", t.task, last.LeaseUntil.Sub(took.At).Round(time.Millisecond), took.Why)
	default:
		st.afterLease++
		st.lateMax = max(st.lateMax, took.At.Sub(last.LeaseUntil))
	}
	return nil
}

// nsKill kills the holder t's first run, in another namespace with PID
// pid, while its create is in flight, and returns its entry as it left it.
func (w *world) nsKill(ctx context.Context, r *row, st *nsStats, t *trial, pid int) (*ledger.Entry, error) {
	e, err := nsEntry(ctx, t.ledger, t.key())
	if err != nil {
		return nil, err
	}
	checkNSHolder(r, t, e.Owner, pid)
	if !pidHere(pid) {
		st.freeHere[1]++
	}
	w.mu.Lock()
	wrapper := w.proc
	w.mu.Unlock()
	g := nsProcess(wrapper, pid)
	if g == nil {
		r.errorf("%s: the holder's process (PID %d in its namespace) was not found", t.task, pid)
		return nil, nil
	}
	harness.KillAndWaitDead(g)
	return nsEntry(ctx, t.ledger, t.key())
}

// nsProcess finds, under the wrapper unshare, the process with PID pid in
// its namespace: unshare → sh (PID 1 there) → it.
func nsProcess(wrapper *os.Process, pid int) *os.Process {
	if wrapper == nil {
		return nil
	}
	for _, sh := range procid.Members(wrapper.Pid, 0) {
		for _, c := range procid.Members(sh, 0) {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c))
			if err != nil {
				continue
			}
			for _, l := range strings.Split(string(b), "\n") {
				if f := strings.Fields(l); len(f) == 3 && f[0] == "NSpid:" && f[2] == strconv.Itoa(pid) {
					p, _ := os.FindProcess(c)
					return p
				}
			}
		}
	}
	return nil
}

// checkNSHolder checks that the holder recorded is what the row says: this
// host's name and boot, another PID namespace, PID pid.
func checkNSHolder(r *row, t *trial, h ledger.Owner, pid int) {
	host, _ := os.Hostname()
	me := procid.Self()
	switch {
	case h.Host != host:
		r.errorf("%s: the holder recorded host %q, not this host's name %q", t.task, h.Host, host)
	case h.Boot != me.Boot:
		r.errorf("%s: the holder recorded another boot id", t.task)
	case h.PIDNS == 0 || h.PIDNS == me.PIDNS:
		r.errorf("%s: the holder recorded PID namespace %d, not one of its own (this one is %d)", t.task, h.PIDNS, me.PIDNS)
	case h.PID != pid:
		r.errorf("%s: the holder recorded PID %d, want %d", t.task, h.PID, pid)
	}
}

// nsEntry, nsHistory and nsNow read the ledger at loc as ghonce status
// would: the holder's identity, its lease, the takeovers.
func nsEntry(ctx context.Context, loc, key string) (*ledger.Entry, error) {
	return withLedger(ctx, loc, func(l ledger.Ledger) (*ledger.Entry, error) { return l.Get(ctx, key) })
}

func nsHistory(ctx context.Context, loc, key string) ([]ledger.Transition, error) {
	return withLedger(ctx, loc, func(l ledger.Ledger) ([]ledger.Transition, error) { return l.History(ctx, key) })
}

func nsNow(ctx context.Context, loc string) (time.Time, error) {
	return withLedger(ctx, loc, func(l ledger.Ledger) (time.Time, error) { return l.Now(ctx) })
}

func withLedger[T any](ctx context.Context, loc string, fn func(ledger.Ledger) (T, error)) (T, error) {
	var zero T
	l, err := store.Open(ctx, loc, store.Options{})
	if err != nil {
		return zero, fmt.Errorf("read ledger %s: %w", loc, err)
	}
	defer l.Close()
	v, err := fn(l)
	if err != nil {
		return zero, fmt.Errorf("read ledger %s: %w", loc, err)
	}
	return v, nil
}
