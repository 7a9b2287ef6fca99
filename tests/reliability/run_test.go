package reliability

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/ghonce/ghonce/tests/harness"
)

// profile sizes the matrix.
type profile struct {
	name        string
	killRuns    int // trials per kill point, kind and ledger variant
	randomRuns  int // trials per kind in the randomised loop
	raceRounds  int // rounds of 16 processes per kind and mode
	faultRuns   int // trials per fault and kind
	maxAttempts int // runs a trial may take before it "needs a person"
	// The shared-Postgres part (postgres_test.go), sized apart: it runs after
	// the SQLite parts and must keep the short profile within minutes.
	pgKillRuns, pgRandomRuns, pgRaceRounds int
	// The repository-ledger part (repoledger_test.go) shares the pg sizes for
	// its kill points and races; its randomised loop and faults are sized
	// here: ghFaultsAll runs every fault (else the repository ledger's own
	// and the dropped and 502 answers on the create).
	ghRandomRuns int
	ghFaultsAll  bool
}

var profiles = map[string]profile{
	"smoke": {name: "smoke", killRuns: 1, randomRuns: 5, raceRounds: 1, faultRuns: 1, maxAttempts: 6, pgKillRuns: 1, pgRandomRuns: 3, pgRaceRounds: 1, ghRandomRuns: 2},
	"short": {name: "short", killRuns: 3, randomRuns: 200, raceRounds: 5, faultRuns: 1, maxAttempts: 6, pgKillRuns: 1, pgRandomRuns: 30, pgRaceRounds: 3, ghRandomRuns: 5},
	"full":  {name: "full", killRuns: 10, randomRuns: 1000, raceRounds: 25, faultRuns: 3, maxAttempts: 6, pgKillRuns: 3, pgRandomRuns: 100, pgRaceRounds: 25, ghRandomRuns: 100, ghFaultsAll: true},
}

// Config is one run of the matrix.
type Config struct {
	Profile profile
	Seed    int64
	Parts   string // comma-separated; empty: all
	Out     string // Markdown report path; empty: none
	Keep    bool   // keep the work directory (ledgers, bodies) for a look
	Logf    func(format string, args ...any)
}

// Report is what a run of the matrix found.
type Report struct {
	cfg     Config
	started time.Time
	dur     time.Duration
	kill    []*row
	random  []*row
	race    []*row
	fault   []*row
	bad     []*row
	// audit is the audit --apply part (audit_test.go).
	audit []*auditRow
	// ns is the other-PID-namespace part (pidns_test.go); nsSkipped says why it
	// did not run, when it did not.
	ns        []*row
	nsSkipped string
	secrets   secretScan
	// calibration per kind for the random loop
	randomInfo []string
	pg         bool // the shared-Postgres part ran
	gh         bool // the repository-ledger part ran
}

type secretScan struct {
	outputs, files int
	leaks          []string
	panics         []string
	locked         []string
}

const parallelKinds = 4

// Run builds ghonce with crash points, runs the matrix and returns its
// report (writing it to cfg.Out when set).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	rep := &Report{cfg: cfg, started: time.Now()}
	root, err := harness.ModuleRoot()
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "ghonce-matrix-")
	if err != nil {
		return nil, err
	}
	if cfg.Keep {
		cfg.Logf("work directory kept: %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	// The read-only-directory case runs ghonce as another user when this is
	// root; it must be able to reach the binary and its directories.
	if err := os.Chmod(work, 0o755); err != nil {
		return nil, err
	}
	bin, err := harness.Build(ctx, root, work, "ghonce_crashpoints")
	if err != nil {
		return nil, err
	}
	helper, err := os.Executable()
	if err != nil {
		return nil, err
	}
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	m := &matrix{bin: bin, helper: helper, token: "ghp_matrix" + hex.EncodeToString(b[:]), root: work, prof: cfg.Profile}
	m.addSecret(m.token)

	want := func(part string) bool {
		if cfg.Parts == "" {
			return true
		}
		for _, p := range strings.Split(cfg.Parts, ",") {
			if strings.TrimSpace(p) == part {
				return true
			}
		}
		return false
	}
	step := func(name string, fn func() error) error {
		if !want(name) {
			return nil
		}
		t0 := time.Now()
		err := fn()
		cfg.Logf("part %s: %s", name, time.Since(t0).Round(time.Millisecond))
		if err != nil {
			// The last line of a failed run names what to rerun.
			return fmt.Errorf("part %s (profile %s, seed %d; rerun it alone with -reliability.parts=%s -reliability.seed=%d): %w", name, cfg.Profile.name, cfg.Seed, name, cfg.Seed, err)
		}
		return nil
	}
	if err := step("kill", func() error {
		rows, err := perKind(ctx, kindNames(everyKind), func(k *kind) ([]*row, error) { return m.killPoints(ctx, k, cfg.Profile.killRuns) })
		rep.kill = rows
		return err
	}); err != nil {
		return nil, err
	}
	if err := step("random", func() error {
		rows, info, err := m.randomKills(ctx, cfg.Seed, nil)
		rep.random, rep.randomInfo = rows, info
		return err
	}); err != nil {
		return nil, err
	}
	if err := step("race", func() error {
		rows, err := m.races(ctx)
		rep.race = rows
		return err
	}); err != nil {
		return nil, err
	}
	if err := step("fault", func() error {
		rows, err := m.faults(ctx, nil)
		rep.fault = rows
		return err
	}); err != nil {
		return nil, err
	}
	if err := step("pidns", func() error {
		if why := pidnsUnavailable(ctx); why != "" {
			if os.Getenv("CI") == "true" {
				return fmt.Errorf("part pidns: %s; under CI=true it must run (as root)", why)
			}
			cfg.Logf("part pidns SKIPPED: %s", why)
			rep.nsSkipped = why
			return nil
		}
		rows, err := m.pidnsRows(ctx, nsPart{name: "pidns", label: nsSQLiteLabel, runs: cfg.Profile.killRuns, ledgerAt: func(w *world, file string) string { return ledgerPath(w, file) }})
		rep.ns = rows
		return err
	}); err != nil {
		return nil, err
	}
	if err := step("pg", func() error { return m.pgPart(ctx, rep, cfg.Seed, cfg.Logf) }); err != nil {
		return nil, err
	}
	if err := step("gh", func() error { return m.ghPart(ctx, rep) }); err != nil {
		return nil, err
	}
	if err := step("bad", func() error {
		rows, err := m.badInput(ctx)
		rep.bad = rows
		return err
	}); err != nil {
		return nil, err
	}
	if err := step("audit", func() error {
		// Each case is one deterministic world: three runs say as much as
		// ten, and keep the full profile within its minutes.
		rows, err := m.auditRows(ctx, min(cfg.Profile.killRuns, 3))
		rep.audit = rows
		return err
	}); err != nil {
		return nil, err
	}

	// Secrets: every output was searched as it came; now every file the
	// matrix left (ledgers, their WAL files, bodies), the binary aside.
	files, leaks, err := scanFiles(work, bin, m.secrets)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	rep.secrets = secretScan{outputs: m.outputs, files: files, leaks: append(m.leaks, leaks...), panics: m.panics, locked: m.locked}
	m.mu.Unlock()
	rep.dur = time.Since(rep.started)
	md := rep.Markdown()
	for _, s := range m.secrets {
		if strings.Contains(md, s) {
			rep.secrets.leaks = append(rep.secrets.leaks, "the report itself")
		}
	}
	if cfg.Out != "" {
		if err := os.WriteFile(cfg.Out, []byte(rep.Markdown()), 0o644); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// perKind runs fn for each kind, parallelKinds at a time, and returns the
// rows in kind order.
func perKind(ctx context.Context, names []string, fn func(k *kind) ([]*row, error)) ([]*row, error) {
	res := make([][]*row, len(names))
	errs := make([]error, len(names))
	sem := make(chan struct{}, parallelKinds)
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			defer func() { <-sem }()
			res[i], errs[i] = fn(kinds[n])
		}()
	}
	wg.Wait()
	var out []*row
	for i := range names {
		out = append(out, res[i]...)
	}
	return out, errors.Join(errs...)
}

// scanFiles searches every file under dir except skip for the secrets.
func scanFiles(dir, skip string, secrets []string) (n int, leaks []string, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || path == skip || d.Type()&fs.ModeType != 0 {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		for _, s := range secrets {
			if s != "" && strings.Contains(string(b), s) {
				leaks = append(leaks, "file "+strings.TrimPrefix(path, dir))
			}
		}
		return nil
	})
	return n, leaks, err
}

// Failures lists every violated expectation.
//
// Each names its part, its row and the seed, then the reason, so that the
// last lines of a failed run say what failed and how to rerun it alone.
func (rep *Report) Failures() []string {
	var out []string
	fail := func(part, row, e string) {
		out = append(out, fmt.Sprintf("part %s, row %s, seed %d: %s", part, row, rep.cfg.Seed, e))
	}
	for _, part := range []struct {
		name string
		rows []*row
	}{{"kill", rep.kill}, {"random", rep.random}, {"race", rep.race}, {"fault", rep.fault}, {"pidns", rep.ns}, {"bad", rep.bad}} {
		for _, r := range part.rows {
			for _, e := range r.errs {
				fail(part.name, fmt.Sprintf("%q", r.kind+" / "+r.what+" / "+r.ledger), e)
			}
		}
	}
	for _, r := range rep.audit {
		for _, e := range r.errs {
			fail("audit", fmt.Sprintf("%q", "audit --apply / "+r.what), e)
		}
	}
	for _, l := range rep.secrets.leaks {
		out = append(out, "token leaked: "+l)
	}
	for _, p := range rep.secrets.panics {
		out = append(out, "panic or goroutine trace: "+p)
	}
	for _, l := range rep.secrets.locked {
		out = append(out, "locked database reported: "+l)
	}
	return out
}

func machine() string {
	return fmt.Sprintf("%d CPUs (nproc), %s %s/%s", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
