package reliability

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/ghonce/ghonce/fixtures"
)

// The shared-Postgres part ("pg"): ghonce on separate machines (each run in
// its own working directory and HOME, nothing shared on disk) that share one
// Postgres ledger, a fresh schema per matrix run. Its rows stand next to the
// SQLite rows of the kill, random and race tables.

// pgEnv names the database the part makes its schema in.
const pgEnv = "GHONCE_TEST_POSTGRES"

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
	loc, drop, err := pgSchema(ctx, dsn)
	if err != nil {
		return err
	}
	if !rep.cfg.Keep {
		defer drop()
	}
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			m.addSecret(pw)
		}
	}
	m.pgLedger = loc

	kill, err := perKind(ctx, kindOrder, func(k *kind) ([]*row, error) { return m.pgKillPoints(ctx, k) })
	if err != nil {
		return err
	}
	random, err := perKind(ctx, randomKinds, func(k *kind) ([]*row, error) {
		ki := 0
		for i, n := range randomKinds {
			if n == k.name {
				ki = i
			}
		}
		// Another stream than the SQLite loop's, as reproducible.
		rng := rand.New(rand.NewPCG(uint64(seed), uint64(1000+ki)))
		r, _, err := m.randomKind(ctx, k, rng, true)
		if err != nil {
			return nil, err
		}
		return []*row{r}, nil
	})
	if err != nil {
		return err
	}
	var race []*row
	for _, rk := range raceKinds {
		w, err := m.newWorld("pg-race-"+rk.name, fixtures.Options{})
		if err != nil {
			return err
		}
		r, err := w.raceRows(ctx, kinds[rk.name], pgLabel, rk.githubUnique)
		w.close()
		if err != nil {
			return err
		}
		race = append(race, r)
	}
	rep.pg = true
	rep.kill = interleave(rep.kill, kill)
	rep.random = interleave(rep.random, random)
	rep.race = interleave(rep.race, race)
	return nil
}

// pgSchema returns dsn with search_path set to a new schema's name, and a
// function that drops the schema.
func pgSchema(ctx context.Context, dsn string) (string, func(), error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", nil, fmt.Errorf("part pg: %s does not parse as a URL", pgEnv)
	}
	var b [6]byte
	if _, err := crand.Read(b[:]); err != nil {
		return "", nil, err
	}
	schema := "ghonce_matrix_" + hex.EncodeToString(b[:])
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	drop := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if c, err := pgx.Connect(ctx, dsn); err == nil {
			_, _ = c.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
			_ = c.Close(ctx)
		}
	}
	return u.String(), drop, nil
}

// onMachine runs p on machine n of w: its own working directory and HOME.
func (w *world) onMachine(p *proc, n int) {
	dir := filepath.Join(w.dir, "machines", fmt.Sprintf("m%d", n))
	_ = os.MkdirAll(dir, 0o755)
	p.dir = dir
	p.env = append(p.env, "HOME="+dir, "XDG_STATE_HOME="+filepath.Join(dir, "state"))
}

// pgKillPoints runs every kill point of k against the shared ledger, each
// run of a trial on the next machine: the rerun after a kill is another
// machine's.
func (m *matrix) pgKillPoints(ctx context.Context, k *kind) ([]*row, error) {
	w, err := m.newWorld("pg-kill-"+k.name, fixtures.Options{})
	if err != nil {
		return nil, err
	}
	defer w.close()
	var rows []*row
	for pi, pt := range points(k) {
		if k.name == "exec-nocheck" && !strings.Contains(pt.name, "after-claim") && !strings.HasPrefix(pt.name, "after the service commits") {
			continue // as in the SQLite rows: the two points that show its design
		}
		r := newRow(k.name, pt.name, pgLabel)
		for n := 0; n < m.prof.pgKillRuns; n++ {
			t := &trial{k: k, task: fmt.Sprintf("PGKP-%s-%d-%d", k.name, pi, n), ledger: m.pgLedger, newHeads: k.name == "pr"}
			to, err := w.runTrial(ctx, t, func(i int, p *proc) {
				w.onMachine(p, i%pgMachines)
				if i == 0 {
					pt.arm(w, t, p)
				}
			}, false, m.prof.maxAttempts)
			if err != nil {
				return nil, err
			}
			if to.kills != 1 || len(to.outs) == 0 || !to.outs[0].Killed {
				r.errorf("%s: the first run was not killed at the point (exit %d: %s)", t.task, to.outs[0].Exit, cause(to.outs[0].Stderr))
			}
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
