package reliability

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	ghledger "github.com/ghonce/ghonce/ledger/github"
)

// The repository-ledger part ("gh"): ghonce on separate machines (each run
// in its own working directory and HOME, nothing shared on disk) whose
// only common ground is the repository, GHONCE_LEDGER=github: the claims
// live in the fake GitHub itself. Its rows stand next to the SQLite rows of
// the kill and race tables.

// ghLabel is the ledger column of the part's rows.
const ghLabel = "the repository (github), separate machines"

// ghPart runs every kill point of every kind, the randomised kill loop,
// the faults (the ledger's own and, in the full profile, every other) and
// the share-nothing races (each racer its own machine) against the
// repository ledger.
func (m *matrix) ghPart(ctx context.Context, rep *Report) error {
	m.shareLedger(ghLabel, "github")
	sh := &sharedLedger{part: "gh", label: ghLabel, loc: "github", stream: 2000, randomRuns: m.prof.ghRandomRuns}
	// Each piece's time is logged: the short profile's cost of this part
	// is watched piece by piece.
	t0 := time.Now()
	lap := func(what string) {
		rep.cfg.Logf("part gh, %s: %s", what, time.Since(t0).Round(time.Millisecond))
		t0 = time.Now()
	}
	kill, err := perKind(ctx, kindNames(everyKind), func(k *kind) ([]*row, error) { return m.sharedKillPoints(ctx, k, "gh", ghLabel, "github") })
	if err != nil {
		return err
	}
	lap("kill points")
	var race []*row
	for _, name := range kindNames(registered) {
		w, err := m.newWorld("gh-race-"+name, fixtures.Options{})
		if err != nil {
			return err
		}
		r, err := w.raceRows(ctx, kinds[name], ghLabel)
		w.close()
		if err != nil {
			return err
		}
		race = append(race, r)
	}
	lap("races")
	random, _, err := m.randomKills(ctx, rep.cfg.Seed, sh)
	if err != nil {
		return err
	}
	lap("randomised kills")
	fault, err := m.faults(ctx, sh)
	if err != nil {
		return err
	}
	lap("faults")
	rep.gh = true
	rep.random = interleave(rep.random, random)
	rep.fault = interleave(rep.fault, fault)
	rep.kill = interleave(rep.kill, kill)
	rep.race = interleave(rep.race, race)
	return nil
}

// ghNamespace is where the repository ledger keeps its refs.
const ghNamespace = "refs/ghonce/"

// isLedgerRequest tells a repository ledger's request (its claim refs and
// their commits) from the action's own: a branch's create is a POST
// .../git/refs too, told apart by the ref its body names.
func isLedgerRequest(r *http.Request) bool {
	if strings.Contains(r.URL.Path, "/git/refs/ghonce/") || strings.Contains(r.URL.Path, "/git/ref/ghonce/") ||
		strings.Contains(r.URL.Path, "/git/matching-refs/ghonce/") || strings.HasSuffix(r.URL.Path, "/git/commits") {
		return true
	}
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/git/refs") || r.Body == nil {
		return false
	}
	b, err := io.ReadAll(r.Body)
	return err == nil && strings.Contains(string(b), `"`+ghNamespace)
}

// isCreateWrite is kind k's create among the writes in flight, never a
// repository ledger's claim (which a branch's matcher would also take).
func isCreateWrite(w *world, t *trial, k *kind, pw *fixtures.PendingWrite) bool {
	return k.isCreate(w, t, pw.Method, pw.Path) && !strings.Contains(pw.Body, `"`+ghNamespace) && !strings.Contains(pw.Path, "/git/refs/ghonce/")
}

// readerToken is the token of the user the matrix reads a repository
// ledger's entries as: its own rate limit, so a fault that spends the
// agent's leaves the matrix able to look.
const readerToken = "ghp_matrixledgerreader"

// repoLedger opens the world's repository ledger as ghonce does, to read
// an entry's status, as a reader with a rate limit of its own.
func (w *world) repoLedger() (*ghledger.Ledger, error) {
	w.readerOnce.Do(func() { w.fake.AddUser("ledger-reader", readerToken) })
	c, err := ghcheck.New(ghcheck.Options{BaseURL: w.fake.URL(), Token: readerToken})
	if err != nil {
		return nil, err
	}
	return ghledger.Open(ghledger.Options{Client: c, Repo: ghcheck.Repo{Owner: owner, Name: repo}})
}

// partPrefix prefixes a shared part's worlds.
func partPrefix(sh *sharedLedger) string {
	if sh == nil {
		return ""
	}
	return sh.part + "-"
}

const (
	// anyExit: a fault row that does not hold the first run to an exit
	// code (how it ends is the backend's choice; what the trial left is
	// what counts).
	anyExit = -100
	// atMostOne: a fault row's first run sends at most one create.
	atMostOne = -2
)

// faultList is the faults run against a shared ledger: for the repository
// ledger, every lost or refused answer to its own writes (the claim's
// create, each update of it), then, with all, every fault of the SQLite
// rows, else only the dropped and 502 answers on the create.
func (sh *sharedLedger) faultList(all bool) []fault {
	var out []fault
	if sh.loc == "github" {
		out = ledgerFaults()
	}
	for _, fl := range faultList() {
		if fl.opts != nil && sh.loc == "github" {
			// A spent rate limit is spent for the ledger's requests too
			// (the same token): the first run may stop at its claim or
			// fail to record its outcome, so how it ends and what its
			// entry says are not held; what the trial leaves is.
			fl.first, fl.entry = anyExit, ""
		}
		if all || strings.HasPrefix(fl.name, "connection dropped") || strings.HasPrefix(fl.name, "502 on the create") || strings.HasPrefix(fl.name, "504") {
			out = append(out, fl)
		}
	}
	return out
}

// claimCreate and claimUpdate match the repository ledger's writes of a
// claim: the ref's create, and every later move of it (each a commit made
// first, then the ref moved without force).
func claimCreate(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git/refs") && isLedgerRequest(r)
}

func claimUpdate(r *http.Request) bool {
	return r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/git/refs/"+strings.TrimPrefix(ghNamespace, "refs/")+"claims/")
}

// ledgerFaults are the repository ledger's own faults: each of its writes
// answered by a dropped connection after GitHub stored it, or by a 502
// before, or a 504 after. Every update of the claim in the first run is
// hit (whichever the backend makes: the in-flight mark, the outcome), so
// the rows hold however the write sequence changes.
func ledgerFaults() []fault {
	each := 1 << 20
	mk := func(name string, match func(*http.Request) bool, kind fixtures.FaultKind, times int) fault {
		return fault{name: name, kinds: kindNames(registered), first: anyExit, creates: atMostOne,
			setup: func(f *faultRun) {
				f.w.fake.Inject(fixtures.Fault{Match: match, Kind: kind, Times: times})
			},
			between: func(f *faultRun) { f.w.fake.ClearFaults(); f.observe() }}
	}
	return []fault{
		mk("connection dropped after GitHub creates the claim", claimCreate, fixtures.DropAfterCommit, 1),
		mk("502 on the claim's create (before commit)", claimCreate, fixtures.Status502BeforeCommit, 1),
		mk("504 after GitHub creates the claim", claimCreate, fixtures.Status504AfterCommit, 1),
		mk("connection dropped after GitHub takes each update of the claim", claimUpdate, fixtures.DropAfterCommit, each),
		mk("502 on each update of the claim (before commit)", claimUpdate, fixtures.Status502BeforeCommit, each),
		mk("504 after GitHub takes each update of the claim", claimUpdate, fixtures.Status504AfterCommit, each),
		mk("connection dropped after GitHub stores each commit of the claim", func(r *http.Request) bool {
			return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git/commits")
		}, fixtures.DropAfterCommit, each),
	}
}
