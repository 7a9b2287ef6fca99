package bench

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/tests/harness"
)

var repoLedgerOut = flag.String("repoledger.out", "", "write the repository-ledger section alone to FILE (- for stdout)")

// repoLedgerLatency is the latency per request the section measures at,
// the one its round-trip target is set at.
const repoLedgerLatency = 100 * time.Millisecond

// repoLedgerKinds are the kinds of the section: every GitHub kind and a
// guarded command.
var repoLedgerKinds = append(slices.Clone(reportKinds), "exec")

// repoLedgerCost is what one run cost on the fake.
type repoLedgerCost struct{ requests, writes, trips int }

func (c repoLedgerCost) String() string {
	return fmt.Sprintf("%d / %d / %d", c.requests, c.writes, c.trips)
}

// repoLedgerReport measures, per kind, a first create and its replay in
// the repository-ledger mode (GHONCE_LEDGER=github, each run a fresh
// process with a home of its own, as a fresh runner) beside the SQLite
// mode (one ledger file `ghonce init` made, the login cached in it), with
// a fixed latency on every request: requests, content-creating requests
// and sequential round trips (fixtures.RoundTrips). It returns the
// section's markdown.
func repoLedgerReport(t *testing.T, bin string) string {
	w := newGWorld(t)
	dir := t.TempDir()
	base := append(harness.CleanEnv(), "GH_TOKEN="+gToken, "GITHUB_API_URL="+w.GitHub.URL(), "GH_REPO="+gRepo)
	sqliteEnv := append(append([]string(nil), base...), "GHONCE_LEDGER="+filepath.Join(dir, "ledger.db"))
	run := func(env []string, args ...string) repoLedgerCost {
		t.Helper()
		if env == nil { // a fresh runner: nothing on disk from earlier runs
			home := t.TempDir()
			env = append(append([]string(nil), base...), "GHONCE_LEDGER=github", "HOME="+home, "XDG_STATE_HOME="+filepath.Join(home, "state"))
		}
		w.GitHub.WaitIdle()
		before := len(w.GitHub.Requests())
		cmd := exec.CommandContext(context.Background(), bin, args...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("ghonce %s: %v: %s", strings.Join(args, " "), err, stderr.String())
		}
		w.GitHub.WaitIdle()
		reqs := w.GitHub.Requests()[before:]
		return repoLedgerCost{requests: len(reqs), writes: writes(reqs), trips: fixtures.RoundTrips(reqs)}
	}
	run(sqliteEnv, "init")
	w.GitHub.SetLatency(repoLedgerLatency)
	defer w.GitHub.SetLatency(0)

	var b strings.Builder
	fmt.Fprintf(&b, "Per kind, what a first create and its replay cost with the claims in the repository (`GHONCE_LEDGER=github`: every run a fresh `ghonce` process with a home of its own, as on a fresh runner) beside the SQLite mode (one ledger file `ghonce init` made, the token's login cached in it), on the fake GitHub at %s per request. Each cell is requests / content-creating requests (every method but GET, what GitHub's 80-a-minute limit counts) / round trips one after another (`fixtures.RoundTrips`). Targets (issue 27) for the repository mode: a first issue or comment ≤ 3 content-creating requests (the artifact included), a replay 0, a first issue ≤ 3 round trips.\n\n", repoLedgerLatency)
	b.WriteString("| kind | first create, SQLite | first create, repository | replay, SQLite | replay, repository | targets met |\n| --- | --- | --- | --- | --- | --- |\n")
	n := 0
	for _, k := range repoLedgerKinds {
		n++
		args := w.cliCreate(k, fmt.Sprintf("RL-SQLITE-%d", n), 2*n)
		sqFirst, sqReplay := run(sqliteEnv, args...), run(sqliteEnv, args...)
		args = w.cliCreate(k, fmt.Sprintf("RL-REPO-%d", n), 2*n+1)
		first, replay := run(nil, args...), run(nil, args...)
		met := "—"
		if k == "issue" || k == "comment" {
			ok := first.writes <= 3 && replay.writes == 0 && (k != "issue" || first.trips <= 3)
			met = map[bool]string{true: "yes", false: "no"}[ok]
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", k, sqFirst, first, sqReplay, replay, met)
		t.Logf("repository ledger: %s: first %s (SQLite %s), replay %s (SQLite %s)", k, first, sqFirst, replay, sqReplay)
		if replay.writes != 0 {
			t.Errorf("%s: a replay on the repository ledger wrote %d times", k, replay.writes)
		}
	}
	b.WriteString("\nA claim write is two requests, a commit object and then the ref. A first create writes the claim, which is the in-flight mark too (the create follows at once, inside the window a taker waits out from the claim's time), and, once GitHub answered, the outcome. A guarded command marks its own start again, with the identity of what it runs. For a GitHub kind the kind's look-up (and the token's login) run beside the read of the claim: a replay reads the claim (the ref, then its commit) and is confirmed by that look-up (a claim is not proof: anyone who can push can write one), and a claim just created uses its answer. What is left above the targets, and why (the outcome write; a first create's three round trips before its own): `docs/guide/repository-ledger.md`, \"What it costs\".\n")
	b.WriteString("\n" + leaseReport(t, bin))
	return b.String()
}

// TestRepoLedgerReport writes the repository-ledger section alone
// (-repoledger.out=FILE, or - for stdout): the narrow run of that part of
// `make bench`.
func TestRepoLedgerReport(t *testing.T) {
	if *repoLedgerOut == "" {
		t.Skip("set -repoledger.out=FILE or - to measure the repository ledger's section")
	}
	md := "## " + repoLedgerSection + "\n\n" + repoLedgerReport(t, buildGhonce(t)) + "\n"
	if *repoLedgerOut == "-" {
		fmt.Print(md)
		return
	}
	if err := os.WriteFile(*repoLedgerOut, []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
}

// repoLedgerSection is the section's heading (tools/benchreport renders
// it after On the wire).
const repoLedgerSection = "The repository as the ledger"
