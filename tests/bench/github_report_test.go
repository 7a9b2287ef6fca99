package bench

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/harness"
	"github.com/ghonce/ghonce/tests/testworld"
)

// TestGitHubReport's flags. benchreport (make bench) runs it with
// -github.out set to a temporary file and renders that file's sections in
// docs/performance.md; make bench-github prints them (-github.out=-).
var (
	githubOut   = flag.String("github.out", "", "write the GitHub request report (markdown) to this file; - for stdout")
	githubMaxN  = flag.Int("github.maxn", 10000, "measure reconcile only at N up to this (a quick check: 40)")
	githubPeers = flag.String("github.peers", "", "directory of the peer ledgers (default: ../shared/bench-peers from the module root, else /work/shared/bench-peers)")
	githubOnly  = flag.String("github.only", "", "measure one section only: wire (On the wire: the CLI and MCP tables)")
)

const (
	gOwner = testworld.Owner
	gName  = testworld.Name
	gRepo  = testworld.Repo
	gLogin = testworld.Login
	gToken = testworld.Token
)

// gworld is the shared test world (testworld) with a fake whose core
// limit never runs out, a thread to comment on, and a pull request by
// someone else whose head adds a file: to review, and to comment on its
// line 1.
type gworld struct {
	*testworld.World
	t            *testing.T
	thread, pull int
}

func newGWorld(t *testing.T) *gworld { return newGWorldOn(t, nil) }

// newGWorldOn is newGWorld with the fake GitHub serving on l (nil: a
// loopback port of its own).
func newGWorldOn(t *testing.T, l net.Listener) *gworld {
	tw := testworld.New(t, testworld.Fake(fixtures.Options{CoreLimit: 1 << 30, Listener: l}))
	w := &gworld{World: tw, t: t, thread: tw.GitHub.SeedIssue(gOwner, gName, "someone", fixtures.SeedIssue{Title: "thread"})}
	tw.GitHub.SetRef(gOwner, gName, "review-me", tw.GitHub.AddCommitBy(gOwner, gName, "main", "someone"))
	w.pull = tw.GitHub.SeedPR(gOwner, gName, "someone", fixtures.SeedPR{Head: "review-me", Title: "review me"})
	return w
}

func (w *gworld) engine() (*reconcile.Engine, *ghcheck.Client, func()) {
	l, err := sqlite.Open(context.Background(), w.Ledger, sqlite.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	c := w.Client(ghcheck.Options{LoginCache: reconcile.LoginCache(l),
		HTTPClient: &http.Client{Timeout: time.Minute}, Budget: ghcheck.Budget{NoPacing: true}})
	e := reconcile.New(reconcile.Config{Ledger: l, GitHub: c, LedgerNew: l.Created(), Settle: -1})
	return e, c, func() { l.Close() }
}

// noBatch hides FindMany: the engine then looks up each entry on its own.
type noBatch struct{ reconcile.GitHub }

func (w *gworld) perEntryEngine() (*reconcile.Engine, func()) {
	l, err := sqlite.Open(context.Background(), w.Ledger, sqlite.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	c := w.Client(ghcheck.Options{LoginCache: reconcile.LoginCache(l), Budget: ghcheck.Budget{NoPacing: true}})
	return reconcile.New(reconcile.Config{Ledger: l, GitHub: noBatch{c}, LedgerNew: l.Created(), Settle: -1}), func() { l.Close() }
}

func (w *gworld) count(fn func()) int {
	w.GitHub.WaitIdle()
	n := len(w.GitHub.Requests())
	fn()
	w.GitHub.WaitIdle()
	return len(w.GitHub.Requests()) - n
}

func (w *gworld) specs(i int) map[string]reconcile.Spec {
	head := fmt.Sprintf("h%d", i)
	sha := w.GitHub.AddCommit(gOwner, gName, "main")
	w.GitHub.SetRef(gOwner, gName, head, sha)
	return map[string]reconcile.Spec{
		"pr":             reconcile.PR{Base: "main", Head: head, Title: "t", Body: "b"},
		"issue":          reconcile.Issue{Title: "t", Body: "b"},
		"comment":        reconcile.Comment{Number: w.thread, Body: "b"},
		"branch":         reconcile.Branch{Name: "b" + head, SHA: w.Main},
		"file":           reconcile.File{Branch: "main", Path: head + ".txt", Message: "m", Content: []byte("x")},
		"release":        reconcile.Release{TagName: "v" + head, Body: "b", Draft: true},
		"labels":         reconcile.Labels{Number: w.thread, Labels: []string{"l" + head}},
		"review":         reconcile.Review{Number: w.pull, Event: "COMMENT", Body: "b"},
		"review-comment": reconcile.ReviewComment{Number: w.pull, Path: "change-someone.txt", Line: 1, Body: "b"},
	}
}

// reportKinds are the kinds the report measures: every kind on GitHub a
// front makes (its Face has an Example), in the registry's order. Each
// has its action in specs: spec fails, naming the kind, for one without.
var reportKinds = slices.DeleteFunc(reconcile.Kinds(), func(k string) bool {
	f, _ := kinds.FaceOf(k)
	return f.Example == ""
})

// spec is kind's action in specs(i).
func (w *gworld) spec(kind string, i int) reconcile.Spec {
	w.t.Helper()
	sp, ok := w.specs(i)[kind]
	if !ok {
		w.t.Fatalf("%s: no action in specs (tests/bench/github_report_test.go): the report measures every kind a front makes", kind)
	}
	return sp
}

// TestEveryKindHasABenchAction: specs holds an action for each kind the
// report measures, and for no other; each is one ghonce accepts. Unlike
// the report, it runs in every go test.
func TestEveryKindHasABenchAction(t *testing.T) {
	w := newGWorld(t)
	sp := w.specs(0)
	for _, k := range reportKinds {
		if sp[k] == nil {
			t.Errorf("%s: no action in specs: the report cannot measure it", k)
		} else if _, err := reconcile.Prepare(reconcile.Action{Task: "T", Repo: gRepo, Spec: sp[k]}); err != nil {
			t.Errorf("%s: its action is refused: %v", k, err)
		}
	}
	for k := range sp {
		if !slices.Contains(reportKinds, k) {
			t.Errorf("specs has an action of %s, which the report does not measure", k)
		}
	}
}

// fieldsOf is sp's fields by their JSON names.
func fieldsOf(sp reconcile.Spec) map[string]any {
	var fields map[string]any
	b, _ := json.Marshal(sp)
	_ = json.Unmarshal(b, &fields)
	return fields
}

// createOf matches the request that creates sp's artifact.
func createOf(sp reconcile.Spec) func(*http.Request) bool {
	return fixtures.MatchMethodPath(testworld.WriteOf(sp, gOwner, gName))
}

// seedAttempting records n attempting entries (pull requests, issues,
// comments in turn) and makes every second one's artifact on the fake.
func (w *gworld) seedAttempting(n int) {
	l, err := sqlite.Open(context.Background(), w.Ledger, sqlite.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	defer l.Close()
	for i := range n {
		var spec reconcile.Spec
		switch i % 3 {
		case 0:
			spec = &reconcile.PR{Base: "main", Head: fmt.Sprintf("r%d", i), Title: "t", Body: "b"}
		case 1:
			spec = &reconcile.Issue{Title: "t", Body: "b"}
		default:
			spec = &reconcile.Comment{Number: w.thread, Body: "b"}
		}
		a := reconcile.Action{Task: fmt.Sprintf("R-%d", i), Step: "s", Repo: gRepo, Spec: spec}
		pa, err := reconcile.Prepare(a)
		if err != nil {
			w.t.Fatal(err)
		}
		key := pa.Key()
		payload, _ := json.Marshal(spec)
		if _, err := l.Claim(context.Background(), ledger.ClaimParams{Key: key, Task: a.Task, Step: "s", Kind: spec.Kind(), Repo: gRepo, Target: spec.Target(),
			Payload: payload, PayloadHash: "h", Owner: ledger.Owner{ID: "gone", Host: "elsewhere", PID: 1}, Lease: time.Nanosecond, Why: "seed"}); err != nil {
			w.t.Fatal(err)
		}
		if i%2 == 1 {
			continue
		}
		body := taskkey.WithMarker(key, "b")
		switch i % 3 {
		case 0:
			w.GitHub.SeedPR(gOwner, gName, gLogin, fixtures.SeedPR{Head: fmt.Sprintf("r%d", i), Base: "main", Title: "t", Body: body})
		case 1:
			w.GitHub.SeedIssue(gOwner, gName, gLogin, fixtures.SeedIssue{Title: "t", Body: body})
		default:
			w.GitHub.SeedComment(gOwner, gName, w.thread, gLogin, body)
		}
	}
}

// TestGitHubReport measures GitHub requests per operation and kind and
// reconcile at N, on the fake, and writes them as markdown with
// -github.out. Figures, not assertions: the budget's assertions are
// reconcile/budget_test.go's.
func TestGitHubReport(t *testing.T) {
	if *githubOut == "" {
		t.Skip("set -github.out=FILE or -github.out=- (make bench-github) to write the GitHub request report")
	}
	var b strings.Builder
	switch *githubOnly {
	case "":
	case "wire":
		b.WriteString("## On the wire\n\n" + wireReport(t, buildGhonce(t)) + "\n")
		writeGitHubReport(t, b.String())
		return
	default:
		t.Fatalf("-github.only=%q: want wire", *githubOnly)
	}
	fmt.Fprintf(&b, "## GitHub requests per operation and per kind\n\nCounted on the fake GitHub (`fixtures`), %s, Go %s. The login is cached in the ledger after the first run (0 requests).\n\n",
		time.Now().UTC().Format("2006-01-02"), strings.TrimPrefix(goVersion(), "go"))
	b.WriteString("| kind | first create, established ledger (target ≤ 4) | replay (target 0) | rerun after the create landed unanswered (target ≤ 3) | first create, `--trust-ledger` |\n| --- | --- | --- | --- | --- |\n")
	w := newGWorld(t)
	e, _, closeL := w.engine()
	if _, err := do(e, reconcile.Action{Task: "SETUP", Step: "c", Repo: gRepo, Spec: reconcile.Comment{Number: w.thread, Body: "hi"}}); err != nil {
		t.Fatal(err)
	}
	closeL()
	for _, k := range reportKinds {
		sp := map[string]reconcile.Spec{k: w.spec(k, 0)}
		a := reconcile.Action{Task: "FIRST-" + k, Step: k, Repo: gRepo, Spec: sp[k]}
		e, _, closeL := w.engine()
		first := w.count(func() { mustDo(t, e, a) })
		replay := w.count(func() { mustDo(t, e, a) })
		closeL()
		// rerun: drop the answer of the create.
		sp = w.specs(1)
		a = reconcile.Action{Task: "CRASH-" + k, Step: k, Repo: gRepo, Spec: sp[k]}
		// Fault the artifact's own create, not a request after it (the
		// labels a PR's create adds, say).
		w.GitHub.Inject(fixtures.Fault{Match: createOf(sp[k]), Kind: fixtures.DropAfterCommit})
		e, _, closeL = w.engine()
		var ue *outcome.UnconfirmedError
		if _, err := do(e, a); !errors.As(err, &ue) {
			t.Fatalf("%s: the dropped create left %v, want an unconfirmed entry", k, err)
		}
		closeL()
		w.GitHub.ClearFaults()
		e, _, closeL = w.engine()
		rerun := w.count(func() { mustDo(t, e, a) })
		closeL()
		// trusted
		l, _ := sqlite.Open(context.Background(), w.Ledger, sqlite.Options{})
		c := w.Client(ghcheck.Options{LoginCache: reconcile.LoginCache(l), Budget: ghcheck.Budget{NoPacing: true}})
		te := reconcile.New(reconcile.Config{Ledger: l, GitHub: c, Settle: -1, TrustNeverAttempted: true})
		sp = w.specs(2)
		trusted := w.count(func() { mustDo(t, te, reconcile.Action{Task: "TRUST-" + k, Step: k, Repo: gRepo, Spec: sp[k]}) })
		l.Close()
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d |\n", k, first, replay, rerun, trusted)
	}
	b.WriteString("\nA first create's look-up writes nothing: GitHub makes the key's label as the create applies it (`ghonce labels describe` gives it its description later).\n\n")
	b.WriteString("\nA rerun's comment look-up reads `issues/N/comments?since=` the first attempt's start (less 10 minutes of clock skew): one page on a thread of any length.\n\n")

	bin := buildGhonce(t)
	b.WriteString("## On the wire\n\n" + wireReport(t, bin) + "\n")
	b.WriteString("## " + repoLedgerSection + "\n\n" + repoLedgerReport(t, bin) + "\n")

	b.WriteString("## Reconcile at N = 40, 1,000 and 10,000\n\nN attempting entries in one repository (pull requests, issues and comments in turn; every second one exists on GitHub), settled by one `Engine.Reconcile` on a SQLite ledger on this machine's disk. Target: ≤ ⌈N/100⌉ + 3 requests; N = 1,000 with 50 ms per request under 5 s.\n\n")
	b.WriteString("| N | look-ups | latency per request | requests | target | time |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, tc := range []struct {
		n        int
		latency  time.Duration
		perEntry bool
	}{{40, 0, true}, {40, 0, false}, {1000, 0, true}, {1000, 0, false}, {1000, 50 * time.Millisecond, false}, {10000, 0, false}} {
		t.Run(fmt.Sprintf("N=%d latency=%s per-entry=%v", tc.n, tc.latency, tc.perEntry), func(t *testing.T) {
			if tc.n > *githubMaxN {
				fmt.Fprintf(&b, "| %d | | | not measured (-github.maxn=%d) | | |\n", tc.n, *githubMaxN)
				return
			}
			w := newGWorld(t)
			w.seedAttempting(tc.n)
			w.GitHub.SetLatency(tc.latency)
			e, _, closeL := w.engine()
			how := "batched"
			if tc.perEntry {
				// For comparison: reconcile without FindMany, one look-up per entry
				// (as before batching; a pull request costs up to three).
				e, closeL = w.perEntryEngine()
				how = "one look-up per entry (FindMany hidden)"
			}
			var took time.Duration
			reqs := w.count(func() {
				start := time.Now()
				out, err := e.Reconcile(context.Background(), reconcile.Filter{})
				took = time.Since(start)
				if err != nil || len(out) != tc.n {
					t.Fatalf("reconcile %d: %d settled, %v", tc.n, len(out), err)
				}
			})
			closeL()
			fmt.Fprintf(&b, "| %d | %s | %s | %d | %d | %s |\n", tc.n, how, tc.latency, reqs, (tc.n+99)/100+3, took.Round(time.Millisecond))
			t.Logf("reconcile N=%d latency=%s: %d requests in %s", tc.n, tc.latency, reqs, took)
		})
	}
	b.WriteString("\nThe two naive peer ledgers, same N, same disk: they never ask GitHub, so a `started` row left by a crash is simply run again (the duplicate ghonce exists to prevent); their figure is the cost of their ledger alone, with their libraries' default durability.\n\n")
	b.WriteString("| N | naive SQLite ledger fresh / replay µs per op | naive JSON-file ledger fresh / replay µs per op |\n| --- | --- | --- |\n")
	for _, n := range []int{40, 1000, 10000} {
		if n > *githubMaxN {
			continue
		}
		fmt.Fprintf(&b, "| %d | %s | %s |\n", n, peer(t, "seed000_sqlite_ledger.py", n), peer(t, "seed003_json_ledger.py", n))
	}
	b.WriteString("\nWhere the time goes: with no latency, reconcile is bound by the ledger (a claim and a finish per entry, each a durable SQLite commit), not by GitHub; with 50 ms per request it is the handful of listing pages (one per 100 entries, read one after another since each page follows the previous one's Link) plus the ledger's commits.\n")
	writeGitHubReport(t, b.String())
}

// buildGhonce builds the ghonce binary the report's processes run.
func buildGhonce(t *testing.T) string {
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := harness.Build(context.Background(), root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// writeGitHubReport writes the report where -github.out says.
func writeGitHubReport(t *testing.T, report string) {
	if *githubOut == "-" {
		fmt.Print(report)
		return
	}
	if err := os.WriteFile(*githubOut, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", *githubOut)
}

func mustDo(t *testing.T, e *reconcile.Engine, a reconcile.Action) {
	t.Helper()
	if _, err := do(e, a); err != nil {
		t.Fatalf("%s/%s: %v", a.Task, a.Step, err)
	}
}

// do runs a through the engine's front door: Prepare, then Do.
func do(e *reconcile.Engine, a reconcile.Action) (*outcome.Result, error) {
	p, err := reconcile.Prepare(a)
	if err != nil {
		return nil, err
	}
	return e.Do(context.Background(), p)
}

// peer runs one of the peer ledgers with n actions and returns its
// figures, or why it could not.
func peer(t *testing.T, script string, n int) string {
	path := filepath.Join("..", "..", "..", "..", "shared", "bench-peers", script)
	if *githubPeers != "" {
		path = filepath.Join(*githubPeers, script)
	} else if _, err := os.Stat(path); err != nil {
		path = filepath.Join("/work/shared/bench-peers", script)
	}
	out, err := exec.Command("python3", path, filepath.Join(t.TempDir(), "peer.db"), fmt.Sprint(n)).Output()
	if err != nil {
		return "not run: " + err.Error()
	}
	var fresh, replay string
	for _, f := range strings.Fields(string(out)) {
		if v, ok := strings.CutPrefix(f, "fresh_us_per_op="); ok {
			fresh = v
		}
		if v, ok := strings.CutPrefix(f, "replay_us_per_op="); ok {
			replay = v
		}
	}
	return fresh + " / " + replay
}

func goVersion() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}
