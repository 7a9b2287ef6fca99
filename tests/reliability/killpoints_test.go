package reliability

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/crashpoint"
	"github.com/ghonce/ghonce/internal/fakegithub"
)

// point is a precise kill point.
type point struct {
	name string
	// arm sets up the kill on the first attempt of trial t; nil for a kind
	// the point does not apply to.
	arm func(w *world, t *trial, p *proc)
}

// points are the kill points, in the order an action passes them.
func points(k *kind) []point {
	crash := func(name string) func(*world, *trial, *proc) {
		return func(_ *world, _ *trial, p *proc) { p.crashAt = name }
	}
	inFlight := func(proceed bool) func(*world, *trial, *proc) {
		if !k.github {
			return func(_ *world, _ *trial, p *proc) { p.rule = &killRule{effect: "before", proceed: proceed} }
		}
		return func(w *world, t *trial, p *proc) {
			p.rule = &killRule{proceed: proceed, write: func(pw *fixtures.PendingWrite) bool { return isCreateWrite(w, t, k, pw) }}
		}
	}
	afterCommit := func(w *world, t *trial, p *proc) {
		if !k.github {
			p.rule = &killRule{effect: "after"}
			return
		}
		p.rule = &killRule{commit: func(c *fixtures.Commit) bool { return k.isCreated(w, t, c) }}
	}
	who, asked := "GitHub", "GitHub is asked"
	switch k.name {
	case "exec":
		who, asked = "the service", "the check runs"
	case "exec-nocheck":
		who, asked = "the service", "the command runs"
	}
	ps := []point{
		{"after the intent is written, before " + asked + " (" + crashpoint.AfterClaim + ")", crash(crashpoint.AfterClaim)},
		{"after the lookup, before the request (" + crashpoint.BeforeCreate + ")", crash(crashpoint.BeforeCreate)},
		{"request in flight; " + who + " then commits it", inFlight(true)},
		{"request in flight; " + who + " never gets it", inFlight(false)},
		{"after " + who + " commits, before the response", afterCommit},
	}
	if k.name == "pr" {
		ps = append(ps, point{"after the PR's labels are committed, before the response", func(w *world, t *trial, p *proc) {
			// Number: labels added to the PR, not the repository's key label
			// that ghonce creates first.
			p.rule = &killRule{commit: func(c *fixtures.Commit) bool {
				return c.Kind == fakegithub.KindLabel && c.Method == "POST" && c.Number != 0
			}}
		}})
	}
	return append(ps,
		point{"after the response, before done is written (" + crashpoint.AfterCreate + ")", crash(crashpoint.AfterCreate)},
		point{"while done is being written (" + crashpoint.InFinish + ")", crash(crashpoint.InFinish)},
	)
}

// killPoints runs every kill point of kind k, with the ledger kept and
// with it deleted after the kill, runs times each.
func (m *matrix) killPoints(ctx context.Context, k *kind, runs int) ([]*row, error) {
	w, err := m.newWorld("kill-"+k.name, fixtures.Options{})
	if err != nil {
		return nil, err
	}
	defer w.close()
	var rows []*row
	for pi, pt := range points(k) {
		variants := []bool{false, true}
		if k.name == "exec-nocheck" {
			if !showsNoCheckDesign(pt) {
				continue
			}
			variants = []bool{false}
		}
		for _, lose := range variants {
			ledger := "kept"
			if lose {
				ledger = "deleted after the kill"
			}
			r := newRow(k.name, pt.name, ledger)
			rows = append(rows, r)
			for n := 0; n < runs; n++ {
				t := &trial{k: k, task: fmt.Sprintf("KP-%s-%d-%t-%d", k.name, pi, lose, n)}
				t.ledger = ledgerPath(w, fmt.Sprintf("kp-%d-%t-%d.db", pi, lose, n))
				// A restarted agent may push a new head branch and reword
				// everything; with the ledger lost, the earlier head is known
				// only to GitHub, so those runs keep their head (see README,
				// Limits, and the measured limit below).
				t.newHeads = k.name == "pr" && !lose
				if k.name == "exec-nocheck" {
					// Without --check, a ledger this run creates is itself a
					// reason to stop (an earlier one may be lost): start from
					// a ledger in use.
					if err := w.warmLedger(ctx, t.ledger); err != nil {
						return nil, err
					}
				}
				to, err := w.runTrial(ctx, t, func(i int, p *proc) {
					if i == 0 {
						pt.arm(w, t, p)
					}
				}, lose, m.prof.maxAttempts)
				if err != nil {
					return nil, err
				}
				checkKilledFirst(r, t, to)
				r.add(to)
			}
			expect(r, k)
		}
	}
	prune, err := m.pruneRows(ctx, w, k, runs)
	if err != nil {
		return nil, err
	}
	rows = append(rows, prune...)
	if k.name == "issue" {
		r, err := w.slowCommitRow(ctx, k, runs)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r)
	}
	if k.name == "exec" {
		for _, o := range orphanCases {
			r, err := w.orphanRow(ctx, runs, o)
			if err != nil {
				return nil, err
			}
			rows = append(rows, r)
		}
	}
	if k.name == "pr" {
		// A rerun with another head and no ledger, after a kill between the
		// PR and its label: only the marker is left, and ghonce reads the
		// newest PRs for it. Held to 0; then measured with more PRs opened
		// in between than that look-up reads (README, Limits).
		for _, between := range []int{0, ghcheck.RecentPRs} {
			what := "after GitHub commits, before the labels; rerun with a new head"
			if between > 0 {
				what = fmt.Sprintf("%s, %d other PRs opened before the rerun", what, between)
			}
			r := newRow(k.name, what, "deleted after the kill")
			for n := 0; n < runs; n++ {
				t := &trial{k: k, task: fmt.Sprintf("KP-pr-limit-%d-%d", between, n), newHeads: true}
				t.ledger = ledgerPath(w, fmt.Sprintf("kp-limit-%d-%d.db", between, n))
				t.after = func(i int, _ *out) error {
					if i == 0 {
						for j := range between {
							w.fake.SeedPR(owner, repo, "someone", fixtures.SeedPR{Title: fmt.Sprintf("Someone's change %d", j), Head: fmt.Sprintf("someone/%s-%d", slug(t.task), j)})
						}
					}
					return nil
				}
				to, err := w.runTrial(ctx, t, func(i int, p *proc) {
					if i == 0 {
						p.rule = &killRule{commit: func(c *fixtures.Commit) bool { return c.Kind == fakegithub.KindPull }}
					}
				}, true, m.prof.maxAttempts)
				if err != nil {
					return nil, err
				}
				r.add(to)
			}
			if between == 0 {
				expect(r, k)
			} else {
				// Duplicates here are the measurement: expect is not
				// called, so r.dups does not fail the row. A lost
				// artifact or a failed confirmation still does.
				r.finding = true
				r.note(fmt.Sprintf("README, Limits: with the ledger lost, a PR that never got its label is found among the %d newest PRs only", ghcheck.RecentPRs))
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// expect records what a kill-point row must show: no duplicate, nothing
// lost, and a rerun that succeeds, except where ghonce is designed to stop
// for a person (a guarded command without --check).
func expect(r *row, k *kind) {
	if r.dups != 0 {
		r.errorf("%d duplicate(s)", r.dups)
	}
	if k.name == "exec-nocheck" && strings.Contains(r.what, crashpoint.AfterClaim) {
		// Killed before its start was marked: the command surely did not
		// run, and the next run runs it, with no person.
		r.note("killed before its start was marked, the command surely did not run: the next run runs it")
	} else if k.name == "exec-nocheck" {
		// Stopping for a person is the design; the person then resolves it.
		r.finding = true
		if r.person != r.runs {
			r.errorf("%d of %d trials went on without a person", r.runs-r.person, r.runs)
		}
		if r.lost != 0 {
			r.errorf("%d lost after the person resolved", r.lost)
		}
		r.note("without --check ghonce cannot tell whether the command ran: it stops (exit 3) until `ghonce resolve KEY --done|--retry`; the matrix resolves as a person would, from the service's record, and reruns")
		return
	}
	if r.person != 0 {
		r.errorf("%d trial(s) needed a person: %s", r.person, r.causeList())
	}
}

// warmLedger makes a ledger that has been used before: one guarded
// command, settled.
func (w *world) warmLedger(ctx context.Context, path string) error {
	t := &trial{k: kinds["exec"], task: "warm-" + strings.ReplaceAll(path, "/", "_"), ledger: path}
	o, err := w.run(ctx, proc{args: t.fullArgs(t.k.args(w, t, 0))})
	if err != nil {
		return err
	}
	if o.Exit != 0 {
		return fmt.Errorf("warm ledger %s: exit %d: %s", path, o.Exit, o.Stderr)
	}
	return nil
}

// orphanCase is how the command of an orphan row does its work and how
// ghonce is stopped while it works.
type orphanCase struct {
	name string
	// grandchild: the effect is made by a child of the command (the
	// command is `sh -c 'effect post & wait'`), not by the command itself.
	grandchild bool
	signal     syscall.Signal
	sigName    string
}

// orphanDeadline bounds the waits of an orphan row for what a released
// command does: a deadline against a hang, never a measure, so it is sized
// for a loaded machine.
const orphanDeadline = 2 * time.Minute

var orphanCases = []orphanCase{
	{"", false, syscall.SIGKILL, "SIGKILL"},
	{"grandchild-kill", true, syscall.SIGKILL, "SIGKILL"},
	{"grandchild-term", true, syscall.SIGTERM, "SIGTERM"},
	{"grandchild-int", true, syscall.SIGINT, "SIGINT"},
}

// orphanRow stops ghonce (oc.signal) while its command is still at work,
// before the command's request: the command, and every process it
// started, must not outlive ghonce and make its effect after the rerun's
// check found none.
func (w *world) orphanRow(ctx context.Context, runs int, oc orphanCase) (*row, error) {
	what := "while the command works, before its request; the command would finish after the rerun"
	if oc.grandchild {
		what = fmt.Sprintf("%s to ghonce while a child of the command works (sh -c 'effect & wait'); it would finish after the rerun", oc.sigName)
	}
	r := newRow("exec", what, "kept")
	outcomes := map[string]int{}
	for n := 0; n < runs; n++ {
		release := w.fx.holdGate()
		t := &trial{k: kinds["exec"], task: fmt.Sprintf("KP-exec-orphan%s-%d", oc.name, n)}
		t.ledger = ledgerPath(w, fmt.Sprintf("kp-orphan%s-%d.db", oc.name, n))
		if oc.grandchild {
			t.k = grandchildExec(t.k)
		}
		t.after = func(i int, _ *out) error {
			if i != 1 {
				return nil
			}
			// The rerun is over: let the first run's command go on, if it
			// still lives, and wait for what it does.
			drain(w.fx.posted)
			release()
			select {
			case o := <-w.fx.orphan:
				outcomes[o]++
				if o == "released" {
					select {
					case <-w.fx.posted:
					case <-time.After(orphanDeadline):
						return fmt.Errorf("orphaned command released but never posted")
					}
				}
			case <-time.After(orphanDeadline):
				return fmt.Errorf("the first run's command never reached the gate")
			}
			return nil
		}
		to, err := w.runTrial(ctx, t, func(i int, p *proc) {
			if i == 0 {
				p.rule = &killRule{effect: "gate", signal: oc.signal}
			}
		}, false, w.m.prof.maxAttempts)
		release()
		if err != nil {
			return nil, err
		}
		if to.attempts < 2 {
			exit := "no run"
			if len(to.outs) > 0 {
				exit = fmt.Sprintf("exit %d", to.outs[0].Exit)
			}
			r.errorf("%s: no rerun ran (%s)", t.task, exit)
		}
		r.add(to)
	}
	r.note(fmt.Sprintf("the first run's command: %d died with ghonce, %d outlived it", outcomes["dead"], outcomes["released"]))
	if r.dups != 0 {
		r.errorf("%d duplicate(s): the command outlived ghonce and made its effect after the rerun's check", r.dups)
	}
	return r, nil
}

// slowCommit is how long the fake takes to commit the create of a
// slowCommitRow after its request arrived: longer than the 2-second settle
// an older ghonce waited, within GitHub's 10-second request limit.
const slowCommit = 2500 * time.Millisecond

// slowCommitRow kills ghonce while its create is in flight to a GitHub
// that commits it slowCommit later, and reruns at once with the default
// --settle: the rerun must not conclude "absent" before the request's
// window (from the sending mark) has closed. An issue has no uniqueness on
// GitHub, so a look too early is a duplicate.
func (w *world) slowCommitRow(ctx context.Context, k *kind, runs int) (*row, error) {
	r := newRow(k.name, fmt.Sprintf("request in flight; GitHub commits it %s later (default --settle)", slowCommit), "kept")
	for n := 0; n < runs; n++ {
		t := &trial{k: k, task: fmt.Sprintf("KP-%s-slow-%d", k.name, n), defaultSettle: true}
		t.ledger = ledgerPath(w, fmt.Sprintf("kp-slow-%d.db", n))
		to, err := w.runTrial(ctx, t, func(i int, p *proc) {
			if i == 0 {
				p.rule = &killRule{proceed: true, delay: slowCommit, write: func(pw *fixtures.PendingWrite) bool { return isCreateWrite(w, t, k, pw) }}
			}
		}, false, w.m.prof.maxAttempts)
		if err != nil {
			return nil, err
		}
		checkKilledFirst(r, t, to)
		r.add(to)
	}
	expect(r, k)
	return r, nil
}

// grandchildExec is k with its command run by a shell in the background:
// the effect is made by a grandchild of ghonce.
func grandchildExec(k *kind) *kind {
	g := *k
	g.args = func(w *world, t *trial, i int) []string {
		a := k.args(w, t, i)
		j := slices.Index(a, "--")
		cmd := shellQuote(w.m.helper) + " " + helperArg + " post & wait $!"
		return append(slices.Clone(a[:j+1]), "/bin/sh", "-c", cmd)
	}
	return &g
}

func drain(c chan string) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

// showsNoCheckDesign picks the kill points the guarded command without
// --check is shown at: it is designed to stop for a person at every point
// after its start was marked, so it is shown where the command surely did
// not run (the next run runs it) and where it surely did.
func showsNoCheckDesign(pt point) bool {
	return strings.Contains(pt.name, crashpoint.AfterClaim) || strings.HasPrefix(pt.name, "after the service commits")
}

// checkKilledFirst reports a trial whose first run was not the one killed
// at the point.
func checkKilledFirst(r *row, t *trial, to trialOut) {
	switch {
	case len(to.outs) == 0:
		r.errorf("%s: no run ran", t.task)
	case to.kills != 1 || !to.outs[0].Killed:
		r.errorf("%s: the first run was not killed at the point (exit %d: %s)", t.task, to.outs[0].Exit, cause(to.outs[0].Stderr))
	}
}
