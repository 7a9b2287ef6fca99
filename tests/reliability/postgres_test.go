package reliability

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
)

// The shared-Postgres part ("pg"): ghonce on separate machines (each run in
// its own working directory and HOME, nothing shared on disk) that share one
// Postgres ledger, a fresh schema per matrix run. Its rows stand next to the
// SQLite rows of the kill, random and race tables.

// pgEnv names the database the part makes its schema in.
const pgEnv = pgtest.EnvVar

// pgLabel is the ledger column of the part's rows.
const pgLabel = "shared Postgres, separate machines"

// pgMachines is how many machines a trial's runs rotate over.
const pgMachines = 4

// pgPart runs the part and merges its rows into rep. Without
// GHONCE_TEST_POSTGRES it is skipped with a message, except under CI=true,
// where that is an error.
func (m *matrix) pgPart(ctx context.Context, rep *Report, seed int64, logf func(string, ...any)) error {
	dsn := os.Getenv(pgEnv)
	if dsn == "" {
		if os.Getenv("CI") == "true" {
			return fmt.Errorf("part pg: %s is empty under CI=true; .ci/run sets it", pgEnv)
		}
		logf("part pg SKIPPED: set %s=postgres://USER@HOST/DB to run ghonce on a shared Postgres ledger", pgEnv)
		return nil
	}
	loc, drop, err := pgtest.NewSchema(dsn, "ghonce_matrix_")
	if err != nil {
		return fmt.Errorf("part pg: %w", err)
	}
	if !rep.cfg.Keep {
		defer func() {
			if err := drop(); err != nil {
				logf("part pg: %v", err)
			}
		}()
	}
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			m.addSecret(pw)
		}
	}
	m.pgLedger = loc
	m.shareLedger(pgLabel, loc)

	kill, err := perKind(ctx, kindNames(everyKind), func(k *kind) ([]*row, error) { return m.sharedKillPoints(ctx, k, "pg", pgLabel, loc) })
	if err != nil {
		return err
	}
	random, _, err := m.randomKills(ctx, seed, &sharedLedger{part: "pg", label: pgLabel, loc: loc, stream: 1000, randomRuns: m.prof.pgRandomRuns})
	if err != nil {
		return err
	}
	var race []*row
	for _, name := range kindNames(registered) {
		w, err := m.newWorld("pg-race-"+name, fixtures.Options{})
		if err != nil {
			return err
		}
		r, err := w.raceRows(ctx, kinds[name], pgLabel)
		w.close()
		if err != nil {
			return err
		}
		race = append(race, r)
	}
	if rep.ns != nil {
		// The other-PID-namespace rows ran on SQLite: the same on Postgres.
		ns, err := m.pidnsRows(ctx, nsPart{name: "pg-pidns", label: nsPGLabel, runs: m.prof.pgKillRuns, ledgerAt: func(*world, string) string { return m.pgLedger }})
		if err != nil {
			return err
		}
		rep.ns = append(rep.ns, ns...)
	}
	rep.pg = true
	rep.kill = interleave(rep.kill, kill)
	rep.random = interleave(rep.random, random)
	rep.race = interleave(rep.race, race)
	return nil
}

// sharedLedger is a ledger every run of a part shares from separate
// machines (the pg and gh parts): the parameter that runs the randomised
// loop and the faults against it instead of a SQLite file per trial.
type sharedLedger struct {
	part   string // prefixes the worlds' and tasks' names
	label  string // the ledger column (or the fault's note) of its rows
	loc    string // --ledger
	stream uint64 // added to the randomised loop's streams
	// randomRuns is the killed trials per kind of its randomised loop.
	randomRuns int
}

// onMachine runs p on machine n of w: its own working directory and HOME.
func (w *world) onMachine(p *proc, n int) {
	dir := filepath.Join(w.dir, "machines", fmt.Sprintf("m%d", n))
	_ = os.MkdirAll(dir, 0o755)
	p.dir = dir
	p.env = append(p.env, "HOME="+dir, "XDG_STATE_HOME="+filepath.Join(dir, "state"))
}

// shareLedger records loc as the ledger every run of the rows labelled
// label shares (the races read it).
func (m *matrix) shareLedger(label, loc string) {
	if m.shared == nil {
		m.shared = map[string]string{}
	}
	m.shared[label] = loc
}

// sharedKillPoints runs every kill point of k against the shared ledger
// loc, each run of a trial on the next machine: the rerun after a kill is
// another machine's. part prefixes the worlds' and tasks' names.
func (m *matrix) sharedKillPoints(ctx context.Context, k *kind, part, label, loc string) ([]*row, error) {
	w, err := m.newWorld(part+"-kill-"+k.name, fixtures.Options{})
	if err != nil {
		return nil, err
	}
	defer w.close()
	var rows []*row
	for pi, pt := range points(k) {
		if k.name == "exec-nocheck" && !showsNoCheckDesign(pt) {
			continue // as in the SQLite rows
		}
		r := newRow(k.name, pt.name, label)
		for n := 0; n < m.prof.pgKillRuns; n++ {
			t := &trial{k: k, task: fmt.Sprintf("%sKP-%s-%d-%d", strings.ToUpper(part), k.name, pi, n), ledger: loc, newHeads: k.name == "pr"}
			to, err := w.runTrial(ctx, t, func(i int, p *proc) {
				w.onMachine(p, i%pgMachines)
				if i == 0 {
					pt.arm(w, t, p)
				}
			}, false, m.prof.maxAttempts)
			if err != nil {
				return nil, err
			}
			checkKilledFirst(r, t, to)
			r.add(to)
		}
		expect(r, k)
		rows = append(rows, r)
	}
	return rows, nil
}

// interleave puts each of extra's rows after the last row of base of the
// same kind (at the end if there is none), so the shared-Postgres rows
// stand next to the SQLite rows they compare with.
func interleave(base, extra []*row) []*row {
	out := append([]*row(nil), base...)
	for _, e := range extra {
		at := len(out)
		for i := len(out) - 1; i >= 0; i-- {
			if out[i].kind == e.kind {
				at = i + 1
				break
			}
		}
		out = append(out[:at], append([]*row{e}, out[at:]...)...)
	}
	return out
}
