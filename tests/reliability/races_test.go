package reliability

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/ghonce/ghonce/fixtures"
)

const racers = 16

// races runs 16 processes on one key: on one ledger (new, and in use), and
// on separate ledgers.
func (m *matrix) races(ctx context.Context) ([]*row, error) {
	// One kind at a time: 16 processes are enough for two cores.
	var rows []*row
	for _, name := range kindNames(registered) {
		w, err := m.newWorld("race-"+name, fixtures.Options{})
		if err != nil {
			return nil, err
		}
		for _, mode := range []string{"one new ledger", "one ledger in use", "separate ledgers"} {
			r, err := w.raceRows(ctx, kinds[name], mode)
			if err != nil {
				w.close()
				return nil, err
			}
			rows = append(rows, r)
		}
		w.close()
	}
	return rows, nil
}

func (w *world) raceRows(ctx context.Context, k *kind, mode string) (*row, error) {
	separate := mode == "separate ledgers"
	sharedLoc, pg := w.m.shared[mode] // a shared ledger on separate machines
	rounds := w.m.prof.raceRounds
	if pg {
		rounds = w.m.prof.pgRaceRounds
	}
	r := newRow(k.name, fmt.Sprintf("%d × %d", rounds, racers), mode)
	r.exits = map[string]int{}
	shared := ledgerPath(w, "race-"+strings.ReplaceAll(mode, " ", "-")+".db")
	if mode == "one ledger in use" {
		if err := w.warmLedger(ctx, shared); err != nil {
			return nil, err
		}
	}
	var spread []time.Duration
	most := 0
	for round := 0; round < rounds; round++ {
		t := &trial{k: k, task: fmt.Sprintf("RACE-%s-%s-%d", k.name, strings.ReplaceAll(mode, " ", "-"), round)}
		t.commitMark, _ = w.counts()
		ledgerOf := func(i int) string {
			switch {
			case separate:
				return ledgerPath(w, fmt.Sprintf("race-sep-%d-%d.db", round, i))
			case mode == "one new ledger":
				return ledgerPath(w, fmt.Sprintf("race-new-%d.db", round))
			case pg:
				return sharedLoc
			}
			return shared
		}
		procs := make([]proc, racers)
		for i := range procs {
			t.ledger = ledgerOf(i)
			procs[i] = w.barrierProc(t)
			if pg {
				w.onMachine(&procs[i], i)
			}
		}
		outs, sp, err := w.runTogether(ctx, procs)
		if err != nil {
			return nil, err
		}
		spread = append(spread, sp)
		r.procs += len(outs)
		// With separate ledgers, a process that failed is an agent that
		// reruns its command.
		for i, o := range outs {
			r.exits[fmt.Sprintf("exit %d", o.Exit)]++
			if strings.Contains(o.Stderr, "locked") {
				r.errorf("%s: a process reported a locked database: %s", t.task, firstLine(o.Stderr))
			}
			if !separate && o.Exit != 0 && o.Exit != 4 {
				r.errorf("%s: a process exited %d: %s", t.task, o.Exit, cause(o.Stderr))
			}
			if o.Exit == 0 {
				continue
			}
			if !separate {
				continue
			}
			t.ledger = ledgerOf(i)
			for n := 0; n < w.m.prof.maxAttempts && o.Exit != 0; n++ {
				o, err = w.run(ctx, proc{args: t.fullArgs(t.k.args(w, t, 0))})
				if err != nil {
					return nil, err
				}
				r.procs++
				r.exits[fmt.Sprintf("exit %d on rerun", o.Exit)]++
			}
			outs[i] = o
			if o.Exit != 0 {
				r.person++
				r.causes[cause(o.Stderr)]++
			}
		}
		n := k.count(w, t, w.commitsSince(t.commitMark))
		most = max(most, n)
		r.runs++
		if n > 1 {
			r.dups += n - 1
			r.dupRounds++
		}
		for _, o := range outs {
			if o.Exit != 0 {
				continue
			}
			switch {
			case o.Res == nil:
				r.lost++
			case n == 0:
				r.lost++
			default:
				if err := k.verify(w, t, o.Res); err != nil {
					r.lost++
					r.errorf("%s: %v", t.task, err)
				}
			}
		}
	}
	sort.Slice(spread, func(i, j int) bool { return spread[i] < spread[j] })
	r.note(fmt.Sprintf("all %d released within %s (median)", racers, spread[len(spread)/2].Round(time.Microsecond)))
	if r.lost != 0 {
		r.errorf("%d lost", r.lost)
	}
	switch {
	case !separate || k.githubUnique:
		if r.dups != 0 {
			r.errorf("%d duplicate(s)", r.dups)
		}
	default:
		r.finding = true
		r.note(fmt.Sprintf("%d of %d rounds made more than one; %.1f per round on average, at most %d", r.dupRounds, r.runs, float64(r.runs+r.dups)/float64(max(r.runs, 1)), most))
	}
	return r, nil
}

// barrierProc is the race's command for t: it waits for its standard
// input before it touches the ledger.
func (w *world) barrierProc(t *trial) proc {
	if t.k.stdinArgs != nil {
		args, stdin := t.k.stdinArgs(w, t)
		return proc{args: t.fullArgs(args), stdin: stdin}
	}
	return proc{args: t.fullArgs(t.k.args(w, t, 0)), stdin: "go\n", wrap: []string{"/bin/sh", "-c", `read -r _; exec "$0" "$@"`}}
}

// runTogether starts every process, each blocked reading its standard
// input, then releases them all at once and waits for them. It returns
// how long the release took.
func (w *world) runTogether(ctx context.Context, procs []proc) ([]*out, time.Duration, error) {
	type running struct {
		cmd            *exec.Cmd
		stdin          io.WriteCloser
		stdout, stderr bytes.Buffer
		start          time.Time
	}
	rs := make([]*running, len(procs))
	cleanup := func() {
		for _, r := range rs {
			if r != nil && r.cmd.Process != nil {
				_ = r.cmd.Process.Kill()
				_ = r.cmd.Wait()
			}
		}
	}
	for i, p := range procs {
		r := &running{cmd: w.command(ctx, p)}
		r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
		in, err := r.cmd.StdinPipe()
		if err != nil {
			cleanup()
			return nil, 0, err
		}
		r.stdin = in
		if err := r.cmd.Start(); err != nil {
			cleanup()
			return nil, 0, fmt.Errorf("start racer: %w", err)
		}
		r.start = time.Now()
		rs[i] = r
	}
	t0 := time.Now()
	for i, r := range rs {
		if _, err := io.WriteString(r.stdin, procs[i].stdin); err != nil {
			cleanup()
			return nil, 0, err
		}
		r.stdin.Close()
	}
	spread := time.Since(t0)
	outs := make([]*out, len(rs))
	var errs []error
	for i, r := range rs {
		err := r.cmd.Wait()
		o := &out{Exit: r.cmd.ProcessState.ExitCode(), Stdout: r.stdout.String(), Stderr: r.stderr.String(), Dur: time.Since(r.start)}
		o.Killed = killedBySIGKILL(r.cmd.ProcessState)
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			errs = append(errs, err)
		}
		if o.Exit == 0 {
			o.Res = parseResult(o.Stdout)
		}
		w.m.watch(w.name+" race "+strings.Join(procs[i].args, " "), o)
		outs[i] = o
	}
	return outs, spread, errors.Join(errs...)
}
