package bench

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/ledger"
	ghledger "github.com/ghonce/ghonce/ledger/github"
	"github.com/ghonce/ghonce/tests/harness"
)

// leaseOptions are the leases the table weighs; the default (once.New's)
// among them.
var leaseOptions = []time.Duration{30 * time.Second, time.Minute, 2 * time.Minute, 5 * time.Minute}

// GitHub's secondary limits on content-creating requests (docs: rate
// limits), which every claim write counts toward.
const contentPerHour, contentPerMinute = 500, 80

// leaseReport measures what the repository ledger's lease costs, at
// repoLedgerLatency per request: one renewal (requests, content-creating
// requests, round trips, time), the heartbeat's renewals over a hold of
// ten periods at a short lease (that an attempt renews every quarter of
// its lease, whatever the lease), and how long a first issue holds its
// claim (a fresh ghonce process, as on a fresh runner); then, per lease,
// what a held claim costs against GitHub's content limits and how long the
// next run waits after its holder died on another machine. It returns the
// subsection's markdown.
func leaseReport(t *testing.T, bin string) string {
	w := newGWorld(t)
	c := w.Client(ghcheck.Options{Budget: ghcheck.Budget{NoPacing: true}})
	l, err := ghledger.Open(ghledger.Options{Client: c, Repo: ghcheck.Repo{Owner: gOwner, Name: gName}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w.GitHub.SetLatency(repoLedgerLatency)
	defer w.GitHub.SetLatency(0)
	measure := func(fn func()) (reqs []fixtures.Request, took time.Duration) {
		w.GitHub.WaitIdle()
		before := len(w.GitHub.Requests())
		start := time.Now()
		fn()
		took = time.Since(start)
		w.GitHub.WaitIdle()
		return w.GitHub.Requests()[before:], took
	}

	// One renewal of a held claim.
	owner := once.NewOwner()
	cl, err := l.Claim(ctx, ledger.ClaimParams{Key: "gk1_lease", Task: "LEASE", Step: "s", Kind: "exec", Owner: owner, Lease: 2 * time.Minute, Why: "claim"})
	if err != nil {
		t.Fatal(err)
	}
	renewal, renewTook := measure(func() {
		if err := l.Renew(ctx, "gk1_lease", cl.Entry.Fence, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	})
	perRenewal := writes(renewal)

	// The heartbeat over ten periods of a short lease.
	const short, periods = 2 * time.Second, 10
	core := once.New(once.Config{Ledger: l, Lease: short, Owner: owner})
	held, _ := measure(func() {
		c, err := core.Claim(ctx, ledger.ClaimParams{Key: "gk1_heartbeat", Task: "LEASE", Step: "h", Kind: "exec", Why: "claim"})
		if err != nil {
			t.Fatal(err)
		}
		_, stop := core.Heartbeat(ctx, "gk1_heartbeat", c.Entry.Fence)
		time.Sleep(periods*short/4 + short/8) // the hold itself: what is measured, with the last tick well inside it
		stop()
	})
	heldWrites := writes(held) - perRenewal // less the claim, itself one write of a commit and a ref

	// A first issue, start to end, as a fresh runner runs it.
	home := t.TempDir()
	cmd := exec.CommandContext(ctx, bin, "issue", "create", "--task", "LEASE-ISSUE", "--title", "t", "--body", "b")
	cmd.Env = append(harness.CleanEnv(), "GH_TOKEN="+gToken, "GITHUB_API_URL="+w.GitHub.URL(), "GH_REPO="+gRepo, "GHONCE_LEDGER=github", "HOME="+home)
	_, issueTook := measure(func() {
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("first issue: %v: %s", err, out)
		}
	})

	var b strings.Builder
	fmt.Fprintf(&b, "### The lease: how long a dead runner's claim holds, and what renewing it costs\n\n")
	fmt.Fprintf(&b, "Measured at %s per request: one renewal of a claim is %d requests, %d of them content-creating, "+
		"in %d round trips (%s). Held for %d periods of a %s lease, the heartbeat wrote %d content-creating requests: "+
		"%.1f renewals, one every quarter of the lease whatever its length. A first issue holds its claim %s "+
		"from start to end (a fresh process), under a quarter of every lease below, so it never renews; "+
		"what renews is what holds a claim longer than that: a guarded command while it runs, and, under a lease of %s, "+
		"a run waiting out a dead attempt's in-flight window (`--settle`, %s).\n\n",
		repoLedgerLatency, len(renewal), perRenewal, fixtures.RoundTrips(renewal), renewTook.Round(time.Millisecond),
		periods, short, heldWrites, float64(heldWrites)/float64(perRenewal), issueTook.Round(time.Millisecond),
		4*once.DefaultSettle, once.DefaultSettle)
	fmt.Fprintf(&b, "Per lease: the content-creating requests a held claim spends on renewals (from the figures above), "+
		"beside GitHub's limits on them (%d a minute, %d an hour, shared with every other write of the token), "+
		"and how long the next run waits after a holder on another machine died (one on this machine is taken over at once).\n\n",
		contentPerMinute, contentPerHour)
	b.WriteString("| lease | renewed every | per minute held | per hour held | of the hourly limit | next run waits after a death |\n" +
		"| --- | --- | --- | --- | --- | --- |\n")
	def := once.New(once.Config{Ledger: l}).Config().Lease
	for _, lease := range leaseOptions {
		perMinute := float64(perRenewal) * float64(time.Minute) / float64(lease/4)
		name := lease.String()
		if lease == def {
			name += " (default)"
		}
		fmt.Fprintf(&b, "| %s | %s | %.0f | %.0f | %.0f%% | %s to %s |\n", name, lease/4, perMinute, perMinute*60, perMinute*60*100/contentPerHour, lease*3/4, lease)
	}
	fmt.Fprintf(&b, "\nThe next run waits at most a lease after its holder's last renewal, at least three quarters of it. "+
		"Choice: the default lease (%s) stays. A shorter one would shorten only that wait, which is rare (a runner dying mid-action) "+
		"and which `--wait` (the action's `wait:`) rides out, while a held guarded command would pay for it all the time: "+
		"at %s one held claim alone would spend %.0f%% of GitHub's hourly content limit, and a renewal refused for it "+
		"lets a live lease lapse and another run take the command over. "+
		"Reasons: `docs/guide/repository-ledger.md`, \"A run that died on another runner\".\n",
		def, leaseOptions[0], float64(perRenewal)*60*4*float64(time.Minute)/float64(leaseOptions[0])*100/contentPerHour)
	t.Logf("lease: renewal %d requests (%d writes) in %s; %d writes over %d periods; a first issue %s", len(renewal), perRenewal, renewTook, heldWrites, periods, issueTook)
	return b.String()
}
