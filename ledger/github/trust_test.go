package github_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/ledger"
	ghledger "github.com/ghonce/ghonce/ledger/github"
	"github.com/ghonce/ghonce/ledger/ledgertest"
	"github.com/ghonce/ghonce/tests/testworld"
)

// readAllClaims is what another account reads of the repository's
// ledger: every commit object the repository holds, reachable or not,
// fetched through GET /git/commits/{sha} with its own token.
func readAllClaims(t *testing.T, s interface{ CommitSHAs(o, r string) []string }, url string) []string {
	t.Helper()
	c, err := ghcheck.New(ghcheck.Options{BaseURL: url, Token: "tok-other"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, sha := range s.CommitSHAs("octo", "repo") {
		cm, err := c.GetGitCommit(t.Context(), ghcheck.Repo{Owner: "octo", Name: "repo"}, sha)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(cm.Message, "ghonce ledger") {
			out = append(out, cm.Message)
		}
	}
	return out
}

// TestClaimHoldsOnlyALockAndARecord: whoever can read the repository reads
// every claim commit, and a commit outlives its ref. A claim holds the
// key, the kind, the status, the fence, the lease, GitHub's times, an
// opaque holder, the artifact's reference and digests, and nothing else:
// no payload, task, step, repository, target, error text, check output,
// person's note, host name, process id or boot id. A runner on the
// holder's own machine still reads the holder's process back.
func TestClaimHoldsOnlyALockAndARecord(t *testing.T) {
	const secret = "s3cr3t-Bearer-abc123"
	s, c := world(t, nil)
	s.AddUser("other", "tok-other")
	l := open(t, c)
	ctx := t.Context()
	host, _ := os.Hostname()
	me := procid.Self()
	owner := ledger.Owner{ID: fmt.Sprintf("%s/%d/beef", host, os.Getpid()), Host: host, PID: me.PID, Boot: me.Boot, PIDNS: me.PIDNS, Start: me.Start}
	p := ledger.ClaimParams{Key: "gk1_k", Task: "task-" + secret, Step: "step-" + secret, Kind: "exec", Repo: "octo/private-" + secret,
		Target: "target-" + secret, Payload: []byte(`{"argv":["curl","-H","Authorization: Bearer ` + secret + `"]}`), PayloadHash: "ab12",
		Owner: owner, Lease: time.Minute, Why: "why-" + secret}
	cl, err := l.Claim(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.MarkSending(ctx, ledger.SendingParams{Key: p.Key, Fence: 1, Lease: time.Minute, Proc: me}); err != nil {
		t.Fatal(err)
	}
	// Another process of this machine reads the holder and the command's
	// supervisor back: it can prove them gone.
	if e, err := open(t, c).Get(ctx, p.Key); err != nil || e.Owner.PID != me.PID || e.Owner.Host != host || e.Sending.Proc != me || e.Owner.ID == owner.ID || e.Owner.ID == "" {
		t.Fatalf("a fresh reader on the holder's machine: %+v, %v; want the holder's process %d on %s, its ID opaque", e, err, me.PID, host)
	}
	if _, err := l.Finish(ctx, ledger.FinishParams{Key: p.Key, Fence: cl.Entry.Fence, Status: ledger.Attempting, Error: "err-" + secret, Why: "release"}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Resolve(ctx, ledger.ResolveParams{Key: p.Key, Status: ledger.Done, Ref: ledger.Ref{Text: "printed-" + secret, URL: "https://github.com/octo/repo/issues/1"}, Who: "who-" + secret, Note: "note-" + secret}); err != nil {
		t.Fatal(err)
	}
	msgs := readAllClaims(t, s, s.URL())
	if len(msgs) != 4 {
		t.Fatalf("read %d claim commits, want 4 (claim, mark, release, resolve)", len(msgs))
	}
	allowed := []string{"key", "kind", "payload_hash", "status", "outcome", "ref", "lease_until", "fence", "attempts",
		"sending_at", "created_at", "updated_at", "holder", "holder_proc", "sending_by", "task_digest", "repo_digest"}
	for _, m := range msgs {
		for _, leak := range []string{secret, host, "beef", me.Boot, fmt.Sprint(me.PID), fmt.Sprint(me.PIDNS), "private"} {
			if holds(m, leak) {
				t.Errorf("a claim commit holds %q:\n%s", leak, m)
			}
		}
		_, body, _ := strings.Cut(m, "\n\n")
		var d struct {
			Entry   map[string]any   `json:"entry"`
			History []map[string]any `json:"history"`
		}
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatalf("%v: %s", err, m)
		}
		for f := range d.Entry {
			if !slices.Contains(allowed, f) {
				t.Errorf("a claim holds the field %q", f)
			}
		}
		for _, tr := range d.History {
			for f := range tr {
				if !slices.Contains([]string{"at", "from", "to", "fence"}, f) {
					t.Errorf("a claim's history holds the field %q", f)
				}
			}
		}
	}
}

var (
	stamp = regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z`)
	word  = regexp.MustCompile(`[A-Za-z0-9]+`)
)

// holds reports whether a claim commit carries v. A long value is looked
// for anywhere; a short one (a host such as "vm", a small process id) only
// as a whole word outside GitHub's times, since an opaque holder or a
// minute of a time may spell it by chance.
func holds(m, v string) bool {
	if len(v) >= 8 {
		return strings.Contains(m, v)
	}
	return slices.Contains(word.FindAllString(stamp.ReplaceAllString(m, " "), -1), v)
}

// TestFormatOneClaimStaysReadable: a claim an earlier version wrote
// (format 1: payload, identity, holder and all) is read as it was, and
// the next write of its key is in format 2, without them.
func TestFormatOneClaimStaysReadable(t *testing.T) {
	clock := ledgertest.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s, c := world(t, clock.Now)
	l := open(t, c)
	ctx := t.Context()
	msg := testworld.ClaimMessage(1, map[string]any{"key": "gk1_old", "task": "T", "step": "s", "kind": "issue", "repo": "octo/repo",
		"payload": []byte(`{"title":"old body"}`), "payload_hash": "h1", "status": "attempting",
		"owner": map[string]any{"ID": "host-a/42/x", "Host": "host-a", "PID": 42}, "lease_until": "c60000", "fence": 1, "attempts": 1,
		"last_error": "timed out", "created_at": "c0", "updated_at": "c0"})
	testworld.Forge(t, s, "octo/repo", "gk1_old", "", msg)
	e, err := l.Get(ctx, "gk1_old")
	// Its holder's host and process, of another machine, prove nothing and
	// are not shown.
	if err != nil || e.Task != "T" || string(e.Payload) != `{"title":"old body"}` || e.Owner != (ledger.Owner{ID: "host-a/42/x"}) || e.LastError != "timed out" {
		t.Fatalf("format 1 read as %+v, %v", e, err)
	}
	clock.Advance(2 * time.Minute)
	cl, err := l.Claim(ctx, ledger.ClaimParams{Key: "gk1_old", Task: "T", Step: "s", Kind: "issue", Repo: "octo/repo", PayloadHash: "h2", Owner: ledger.Owner{ID: "b"}, Lease: time.Minute, Why: "run"})
	if err != nil || cl.State != ledger.ClaimAcquired || cl.Entry.Fence != 2 || cl.Entry.PayloadHash != "h1" {
		t.Fatalf("claim over format 1: %+v, %v", cl, err)
	}
	e, err = open(t, c).Get(ctx, "gk1_old")
	if err != nil || e.Payload != nil || e.Task != "" || e.Owner.Host != "" || e.LastError != "" || e.PayloadHash != "h1" {
		t.Fatalf("after the next write: %+v, %v; want format 2, the payload's hash alone", e, err)
	}
	// Its task and repository still narrow a listing, by their digests.
	if es, err := open(t, c).List(ctx, ledger.ListParams{Task: "T", Repo: "OCTO/repo"}); err != nil || len(es) != 1 {
		t.Errorf("List by task and repository: %d, %v; want the entry", len(es), err)
	}
	if es, err := open(t, c).List(ctx, ledger.ListParams{Task: "other"}); err != nil || len(es) != 0 {
		t.Errorf("List by another task: %d, %v; want none", len(es), err)
	}
}

// TestUnreadableClaimsAreSkipped: a ref under the claims prefix that holds
// no claim of its own key (a commit that is not a claim, a claim copied
// from another key, a format from the future) is skipped and reported by
// List and Prune, never fatal to the other keys; its own key is refused
// with what to do, and Remove clears it.
func TestUnreadableClaimsAreSkipped(t *testing.T) {
	s, c := world(t, nil)
	var mu sync.Mutex
	var told []string
	l, err := ghledger.Open(ghledger.Options{Client: c, Repo: ghcheck.Repo{Owner: "octo", Name: "repo"}, Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		told = append(told, fmt.Sprintf(f, a...))
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := l.Claim(ctx, claimParams("good", "a")); err != nil {
		t.Fatal(err)
	}
	good := testworld.ClaimMessage(2, map[string]any{"key": "good", "status": "done", "fence": 9, "attempts": 1, "created_at": "c0", "updated_at": "c0"})
	bad := map[string]string{
		"foreign": "Add a file\n\nnot a claim",
		"copy":    good,
		"future":  testworld.ClaimMessage(99, map[string]any{"key": "future", "status": "done", "fence": 1}),
		"garbled": testworld.ClaimMessage(2, map[string]any{"key": "garbled", "status": "done", "fence": 1, "lease_until": "c-x"}),
	}
	for key, msg := range bad {
		testworld.Forge(t, s, "octo/repo", key, "", msg)
	}
	es, err := open(t, c).List(ctx, ledger.ListParams{})
	if err != nil || len(es) != 1 || es[0].Key != "good" || es[0].Status != ledger.Attempting {
		t.Fatalf("List with four unreadable claims = %+v, %v; want the good one alone", es, err)
	}
	if _, err := l.List(ctx, ledger.ListParams{}); err != nil {
		t.Fatal(err)
	}
	if len(told) != 4 {
		t.Errorf("reported %d skipped claims, want 4: %q", len(told), told)
	}
	for key := range bad {
		ref := l.RefOf(key)
		if !slices.ContainsFunc(told, func(m string) bool { return strings.Contains(m, ref) && strings.Contains(m, "git push origin :"+ref) }) {
			t.Errorf("%s (%s) was not reported with how to remove it: %q", key, ref, told)
		}
		if key == "future" {
			continue // "upgrade ghonce", as before
		}
		_, err := l.Claim(ctx, claimParams(key, "a"))
		if err == nil || !strings.Contains(err.Error(), "ghonce prune KEY") || errors.Is(err, ledger.ErrUnavailable) {
			t.Errorf("Claim of %s over an unreadable claim: %v; want refused, saying how to remove it", key, err)
		}
	}
	if gone, err := l.Remove(ctx, "copy", false); err != nil || gone != nil {
		t.Fatalf("Remove(copy) = %+v, %v", gone, err)
	}
	if cl, err := l.Claim(ctx, claimParams("copy", "a")); err != nil || cl.State != ledger.ClaimCreated {
		t.Fatalf("claim once removed = %+v, %v; want created", cl, err)
	}
	if _, err := l.Remove(ctx, "never", false); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("Remove of a key with no claim: %v", err)
	}
	checkDocumented(t, s)
}

// The same-act rule reads two whys back from the history: an attempt
// released as "it may have happened" (ReleasedWhy), and a description
// answered as the key's act (a digest). The repository ledger keeps those
// in the history it publishes, and no other why: a rerun on a fresh runner
// reads them back.
func TestHistoryKeepsOnlyPublicWhys(t *testing.T) {
	_, c := world(t, nil)
	l := open(t, c)
	ctx := t.Context()
	hash := strings.Repeat("ab", 32)
	p := ledger.ClaimParams{Key: "gk1_k", Task: "t", Step: "s", Kind: "issue", Repo: "octo/repo", PayloadHash: hash, Owner: ledger.Owner{ID: "run-a"}, Lease: time.Minute, Why: "claim by a"}
	cl, err := l.Claim(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Finish(ctx, ledger.FinishParams{Key: p.Key, Fence: cl.Entry.Fence, Status: ledger.Attempting, Why: ledger.ReleasedWhy, Error: "504 from api.example.com after /tmp/secret-plan.md"}); err != nil {
		t.Fatal(err)
	}
	p.Owner, p.Why = ledger.Owner{ID: "run-b"}, "claim by b"
	if cl, err = l.Claim(ctx, p); err != nil || cl.State != ledger.ClaimAcquired {
		t.Fatalf("claim after the release: %+v, %v", cl, err)
	}
	if _, err := l.Finish(ctx, ledger.FinishParams{Key: p.Key, Fence: cl.Entry.Fence, Status: ledger.Done, Outcome: "found", Why: "found"}); err != nil {
		t.Fatal(err)
	}
	if err := l.SetPayload(ctx, ledger.PayloadParams{Key: p.Key, Fence: cl.Entry.Fence, PayloadHash: hash, Why: ledger.AnsweredWhy(hash), Done: true}); err != nil {
		t.Fatal(err)
	}
	hist, err := open(t, c).History(ctx, p.Key)
	if err != nil {
		t.Fatal(err)
	}
	var whys []string
	for _, h := range hist {
		if h.Why != "" {
			whys = append(whys, h.Why)
		}
	}
	if want := []string{ledger.ReleasedWhy, ledger.AnsweredWhy(hash)}; !slices.Equal(whys, want) {
		t.Fatalf("whys read back %q, want only %q", whys, want)
	}
	if ledger.PublicWhy(ledger.AnsweredWhy("not-hex")) || ledger.PublicWhy("answered as the same act: description "+hash+" plus words") {
		t.Fatal("PublicWhy took a why that holds more than a digest")
	}
}
