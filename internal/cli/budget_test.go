package cli

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
)

// `ghonce init` records the token's login, so the first pr create on the
// ledger it made costs at most 4 GitHub requests, GET /user not among them.
func TestInitCachesTheLoginForTheFirstPRCreate(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	o := w.run("", nil, "init")
	if o.code != 0 || !strings.Contains(o.stderr, "recorded the token's login (agent-bot)") {
		t.Fatalf("init: exit %d, stderr %q", o.code, o.stderr)
	}
	sha := w.fake.AddCommit(testOwner, testName, "main")
	w.fake.SetRef(testOwner, testName, "fix-1", sha)
	w.fake.WaitIdle()
	before := len(w.fake.Requests())
	o = w.run("", nil, "pr", "create", "--task", "T1", "--repo", testRepo, "--base", "main", "--head", "fix-1", "--title", "t", "--body", "b")
	if o.code != 0 {
		t.Fatalf("pr create: exit %d: %s", o.code, o.stderr)
	}
	w.fake.WaitIdle()
	var paths []string
	for _, r := range w.fake.Requests()[before:] {
		paths = append(paths, r.Method+" "+r.Path)
	}
	if len(paths) > 4 || strings.Contains(strings.Join(paths, ","), "/user") {
		t.Errorf("first pr create after init: %d requests, want at most 4 and no GET /user: %v", len(paths), paths)
	}
}

// In a pipe reconcile draws no bar, and always ends with a summary that
// counts what it spent.
func TestReconcileSummaryInAPipe(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	// The issue's create, not the key label made just before it.
	w.fake.Inject(fixtures.Fault{Match: func(r *http.Request) bool {
		return r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/repos/"+testRepo+"/issues")
	}, Kind: fixtures.DropAfterCommit, Times: 1})
	if o := w.run("", nil, "issue", "create", "--task", "T1", "--repo", testRepo, "--title", "t", "--body", "b"); o.code != failure.ExitUnconfirmed {
		t.Fatalf("dropped create: exit %d, want %d: %s", o.code, failure.ExitUnconfirmed, o.stderr)
	}
	o := w.run("", nil, "reconcile", "--settle", "0")
	if o.code != 0 {
		t.Fatalf("reconcile: exit %d: %s", o.code, o.stderr)
	}
	if !strings.Contains(o.stderr, "settled 1 done, 0 failed, 0 still attempting; 1 GitHub request\n") {
		t.Errorf("summary missing or wrong: %q", o.stderr)
	}
	if strings.ContainsAny(o.stderr, "\r\x1b") {
		t.Errorf("a progress bar was drawn into a pipe: %q", o.stderr)
	}
}

func TestWritePacingFromTheEnvironment(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	o := w.run("", map[string]string{"GHONCE_WRITES_PER_MINUTE": "eighty"}, "issue", "create", "--task", "T1", "--repo", testRepo, "--title", "t", "--body", "b")
	if o.code != failure.ExitUsage || !strings.Contains(o.stderr, "invalid GHONCE_WRITES_PER_MINUTE") {
		t.Errorf("exit %d, stderr %q; want a usage error naming the variable", o.code, o.stderr)
	}
	if n := len(w.fake.Issues(testOwner, testName)); n != 0 {
		t.Errorf("%d issues created despite the usage error", n)
	}
}

// A first pull request through the CLI and through the gh shim, on a
// ledger `ghonce init` made: two content-creating requests (the create and
// its labels) and three round trips one after another before the process
// ends (the look-up, the create, the labels). The labels cannot follow the
// answer here as they do in `ghonce mcp` (docs/design/wire.md): the
// process ends with its answer, and the labels are what a rerun with its
// ledger lost and another head finds the pull request by. gh's -a, -r and
// -m go beside the labels: each a write of its own (the user's asks), no
// round trip more (-m's milestones are read beside the look-up). Without
// --base, gh's default branch is read before the look-up: one more. reconcile's TestWireFirstCreate counts the engine's
// fronts.
func TestWireFirstPRCreateCLIAndShim(t *testing.T) {
	t.Parallel()
	w := newGhCLIWorld(t)
	if o := w.run("", nil, "init"); o.code != 0 {
		t.Fatalf("init: exit %d: %s", o.code, o.stderr)
	}
	for _, h := range []string{"wire-cli", "wire-shim", "wire-shim-meta", "wire-shim-default"} {
		w.fake.SetRef(testOwner, testName, h, w.fake.AddCommit(testOwner, testName, "main"))
	}
	for _, tc := range []struct {
		front         string
		args          []string // after "gh" for the shim
		shim          bool
		writes, trips int
	}{
		{"ghonce pr create", []string{"pr", "create", "--task", "WIRE-CLI", "--repo", testRepo, "--base", "main", "--head", "wire-cli", "--title", "t", "--body", "b"}, false, 2, 3},
		{"gh pr create", []string{"pr", "create", "-R", testRepo, "--base", "main", "--head", "wire-shim", "--title", "t", "--body", "b"}, true, 2, 3},
		{"gh pr create -a -r -m", []string{"pr", "create", "-R", testRepo, "--base", "main", "--head", "wire-shim-meta", "--title", "t", "--body", "b", "-a", "monalisa", "-r", "hubot", "-m", "v1"}, true, 5, 3},
		{"gh pr create without --base", []string{"pr", "create", "-R", testRepo, "--head", "wire-shim-default", "--title", "t", "--body", "b"}, true, 2, 4},
	} {
		w.fake.WaitIdle()
		before := len(w.fake.Requests())
		w.fake.SetLatency(wireLatency)
		var o cliRun
		if tc.shim {
			o = w.gh("", map[string]string{"GHONCE_TASK": "WIRE-" + tc.front}, tc.args...)
		} else {
			o = w.run("", nil, tc.args...)
		}
		w.fake.SetLatency(0)
		if o.code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.front, o.code, o.stderr)
		}
		w.fake.WaitIdle()
		reqs := w.fake.Requests()[before:]
		var paths []string
		writes := 0
		for _, r := range reqs {
			paths = append(paths, r.Method+" "+r.Path)
			if r.Method != http.MethodGet {
				writes++
			}
		}
		trips := fixtures.RoundTrips(reqs)
		t.Logf("%s: %d requests, %d content-creating, %d round trips one after another: %v", tc.front, len(reqs), writes, trips, paths)
		if writes > tc.writes {
			t.Errorf("%s: %d content-creating requests, want at most %d: %v", tc.front, writes, tc.writes, paths)
		}
		if trips > tc.trips {
			t.Errorf("%s: %d round trips one after another, want at most %d: %v", tc.front, trips, tc.trips, paths)
		}
	}
}

// wireLatency is the fake's delay per request where round trips are
// counted: well above the machine's scheduling delays, so that requests
// sent together overlap for certain. 50 ms was not, under make test's
// -race load on 2 cores: a read sent beside two others started after they
// had ended, and counted as a round trip of its own.
const wireLatency = 250 * time.Millisecond
