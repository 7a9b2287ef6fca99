package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/tests/audittest"
)

// auditWorld is the audit corpus on the fake, and the CLI's environment
// with the naive agent's token.
type auditWorld struct {
	t      *testing.T
	fake   *fixtures.Server
	corpus audittest.Corpus
	env    map[string]string
	now    func() time.Time
	// sleep, if set, is the run's IO.Sleep.
	sleep func(ctx context.Context, d time.Duration) error
}

func newAuditWorld(t *testing.T) *auditWorld {
	t.Helper()
	clock := audittest.NewClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	fake := fixtures.NewServer(fixtures.Options{Now: clock.Now})
	t.Cleanup(fake.Close)
	c := audittest.Seed(fake, "octo", "corpus")
	return &auditWorld{t: t, fake: fake, corpus: c, now: clock.Now, env: map[string]string{
		"GH_TOKEN": audittest.AgentToken, "GITHUB_API_URL": fake.URL(), "GHONCE_LEDGER": filepath.Join(t.TempDir(), "ledger.db"),
		"GH_REPO": "octo/corpus",
	}}
}

func (w *auditWorld) run(args ...string) cliRun {
	var out, errb bytes.Buffer
	sys := IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return w.env[k] }, Now: w.now, Sleep: w.sleep, Executable: os.Executable}
	code := Main(context.Background(), args, sys)
	return cliRun{code: code, stdout: out.String(), stderr: errb.String()}
}

// TestAuditJSONShape: --json prints one object with the issue's shape:
// groups of kind, evidence, keep and duplicates (issues and PRs by
// number, comments by id, branches by name), and requests; exit 6 while
// duplicates are open.
func TestAuditJSONShape(t *testing.T) {
	w := newAuditWorld(t)
	r := w.run("audit", "--json", "--since", "0")
	if r.code != failure.ExitDuplicates {
		t.Fatalf("exit %d, want %d; stderr %s", r.code, failure.ExitDuplicates, r.stderr)
	}
	var got struct {
		OK       bool  `json:"ok"`
		ExitCode int   `json:"exit_code"`
		Requests int64 `json:"requests"`
		Groups   []struct {
			Kind       string                       `json:"kind"`
			Evidence   string                       `json:"evidence"`
			Keep       map[string]any               `json:"keep"`
			Duplicates []map[string]json.RawMessage `json:"duplicates"`
		} `json:"groups"`
		Actions []map[string]any `json:"actions"`
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&got); err != nil || dec.More() {
		t.Fatalf("stdout is not one JSON object (%v): %s", err, r.stdout)
	}
	if got.ExitCode != failure.ExitDuplicates || got.Requests <= 0 || len(got.Groups) != len(w.corpus.Groups) {
		t.Fatalf("exit_code %d, requests %d, %d groups (want %d): %s", got.ExitCode, got.Requests, len(got.Groups), len(w.corpus.Groups), r.stdout)
	}
	// A group's artifacts are named by the field their kind's Audit.Ref
	// names first ("review {id} on #{thread}": id).
	idField := func(kind string) string {
		f, _ := kinds.FaceOf(kind)
		if f.Audit == nil {
			return ""
		}
		m := regexp.MustCompile(`\{(\w+)\}`).FindStringSubmatch(f.Audit.Ref)
		return m[1]
	}
	for _, g := range got.Groups {
		f := idField(g.Kind)
		if f == "" || (g.Evidence != "key" && g.Evidence != "exact") {
			t.Fatalf("group kind %q evidence %q", g.Kind, g.Evidence)
		}
		if _, ok := g.Keep[f]; !ok {
			t.Errorf("%s group: keep has no %q: %v", g.Kind, f, g.Keep)
		}
		for _, d := range g.Duplicates {
			if _, ok := d[f]; !ok {
				t.Errorf("%s group: a duplicate has no %q", g.Kind, f)
			}
		}
	}
	if len(got.Actions) == 0 {
		t.Error("a dry run lists no actions")
	}
	for _, a := range got.Actions { // a kind's Audit.Leave: what --apply leaves (GitHub deletes no submitted review)
		if f, _ := kinds.FaceOf(fmt.Sprint(a["kind"])); f.Audit != nil && f.Audit.Leave != "" && a["skipped"] == nil {
			t.Errorf("--apply would act on a %s, which its Audit leaves: %v", a["kind"], a)
		}
	}
	if w.fake.Writes() != 0 {
		t.Fatalf("a dry run wrote %d times", w.fake.Writes())
	}
}

// TestAuditTableAndSummary: prose is a table with each duplicate and what
// --apply would do, and --summary writes Markdown; a clean repository
// exits 0.
func TestAuditTableAndSummary(t *testing.T) {
	w := newAuditWorld(t)
	sum := filepath.Join(t.TempDir(), "summary.md")
	r := w.run("audit", "--since", "0", "--summary", sum)
	if r.code != failure.ExitDuplicates {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"KIND", "EVIDENCE", "would comment linking #1, close as a duplicate", "would delete the comment", "look-alike, not a duplicate"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stderr, "GitHub requests") || !strings.Contains(r.stderr, "dry run") {
		t.Errorf("stderr lacks the requests spent or the dry-run notice: %s", r.stderr)
	}
	md, err := os.ReadFile(sum)
	if err != nil || !strings.Contains(string(md), "## ghonce audit of octo/corpus") || !strings.Contains(string(md), "| kind | evidence |") {
		t.Fatalf("summary (%v):\n%s", err, md)
	}

	clean := newAuditWorld(t)
	clean.env["GH_REPO"] = "octo/empty"
	clean.fake.AddRepo("octo", "empty", "main")
	clean.fake.SeedIssue("octo", "empty", "someone", fixtures.SeedIssue{Title: "One issue", Body: "b"})
	if r := clean.run("audit"); r.code != failure.ExitOK || !strings.Contains(r.stdout, "no duplicates found") {
		t.Fatalf("clean repository: exit %d, %s %s", r.code, r.stdout, r.stderr)
	} else if !strings.Contains(r.stderr, "read 1 issue, 0 pull requests, 0 comments") {
		t.Errorf("stderr does not count one issue in the singular: %s", r.stderr)
	}
	if r := clean.run("audit", "--since", "yesterday"); r.code != failure.ExitUsage {
		t.Fatalf("bad --since: exit %d", r.code)
	}
	if r := clean.run("audit", "--kind", "wiki"); r.code != failure.ExitUsage {
		t.Fatalf("bad --kind: exit %d", r.code)
	}
}

// TestAuditApplyTwice: --apply closes the agent's duplicate issues (as
// duplicates) and PRs with one linking comment each, deletes its duplicate
// comments, deletes no branch and touches none of the look-alikes nor the
// duplicates whose text differs from the kept one's (exit 6 for those); a
// second --apply writes nothing.
func TestAuditApplyTwice(t *testing.T) {
	w := newAuditWorld(t)
	before := w.fake.Branches("octo", "corpus")
	r := w.run("audit", "--since", "0", "--apply", "--json")
	if r.code != failure.ExitDuplicates {
		t.Fatalf("first --apply: exit %d, want %d (the duplicates whose text differs)\n%s\n%s", r.code, failure.ExitDuplicates, r.stdout, r.stderr)
	}
	writes := w.fake.Writes()
	if writes == 0 {
		t.Fatal("--apply wrote nothing")
	}
	issues := map[int]fakegithub.Issue{}
	for _, is := range w.fake.Issues("octo", "corpus") {
		issues[is.Number] = is
	}
	prs := map[int]fakegithub.PR{}
	for _, p := range w.fake.PullRequests("octo", "corpus") {
		prs[p.Number] = p
	}
	for _, g := range w.corpus.Groups {
		for _, d := range g.Duplicates {
			n := 0
			var id int64
			if _, err := fmt.Sscanf(d, "comment %d on #%d", &id, &n); err == nil {
				gone := true
				for _, c := range w.fake.Comments("octo", "corpus", n) {
					gone = gone && c.ID != id
				}
				if gone != !g.Differs {
					t.Errorf("comment %s: deleted %v after --apply, want %v", d, gone, !g.Differs)
				}
				continue
			}
			if _, err := fmtSscan(d, &n); err != nil {
				continue // branches: below
			}
			state := ""
			if g.Kind == "issue" {
				state = issues[n].State
			} else {
				state = prs[n].State
			}
			want, wantLinks := "closed", 1
			if g.Differs {
				want, wantLinks = "open", 0
			}
			if state != want {
				t.Errorf("%s %s: state %q after --apply, want %s", g.Kind, d, state, want)
			}
			links := 0
			for _, c := range w.fake.Comments("octo", "corpus", n) {
				if c.Author == audittest.Agent && strings.Contains(c.Body, "Closing as a duplicate of "+g.Keep) {
					links++
				}
			}
			if links != wantLinks {
				t.Errorf("%s %s: %d linking comments, want %d", g.Kind, d, links, wantLinks)
			}
		}
	}
	// The duplicate comments are gone, the kept and the look-alikes stay.
	for _, n := range []int{1, 6} {
		seen := map[string]int{}
		for _, c := range w.fake.Comments("octo", "corpus", n) {
			if c.Author == audittest.Agent && !strings.Contains(c.Body, "Closing as a duplicate") {
				seen[c.Body]++
			}
		}
		for body, k := range seen {
			if k > 1 {
				t.Errorf("#%d: %d comments %q by the agent after --apply", n, k, body)
			}
		}
	}
	if br := w.fake.Branches("octo", "corpus"); len(br) != len(before) {
		t.Errorf("branches before --apply %v, after %v: audit deletes no branch", before, br)
	}
	for _, n := range w.corpus.NotDuplicates {
		if strings.Contains(r.stdout, `"target":"`+n+`"`) {
			t.Errorf("--apply acted on the look-alike %s", n)
		}
	}

	again := w.run("audit", "--since", "0", "--apply")
	if again.code != failure.ExitDuplicates {
		t.Fatalf("second --apply: exit %d\n%s", again.code, again.stderr)
	}
	if got := w.fake.Writes(); got != writes {
		t.Fatalf("second --apply wrote %d times more", got-writes)
	}
}

func fmtSscan(ref string, n *int) (int, error) { return fmt.Sscanf(ref, "#%d", n) }

// TestAuditApplyAdoptsTheKeptKey: the kept issue of a key group carries
// the naive run's key; after --apply the ledger holds that key done, so
// the task's next run replays it without a write.
func TestAuditApplyAdoptsTheKeptKey(t *testing.T) {
	w := newAuditWorld(t)
	if r := w.run("audit", "--since", "0", "--apply", "--kind", "issue"); r.code != failure.ExitDuplicates {
		t.Fatalf("--apply: exit %d\n%s", r.code, r.stderr)
	}
	writes := w.fake.Writes()
	r := w.run("issue", "create", "--task", audittest.NaiveTask, "--step", audittest.AdoptStep, "--title", audittest.AdoptTitle, "--body", audittest.AdoptBody, "--json")
	var res struct {
		Outcome        string `json:"outcome"`
		Number         int    `json:"number"`
		PayloadChanged bool   `json:"payload_changed"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != failure.ExitOK {
		t.Fatalf("issue create: exit %d (%v)\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if res.Outcome != "skipped" || res.Number != 6 || res.PayloadChanged {
		t.Fatalf("next run of the task: %+v, want skipped #6 with its description unchanged", res)
	}
	if w.fake.Writes() != writes {
		t.Fatalf("the task's next run wrote %d times", w.fake.Writes()-writes)
	}
}
