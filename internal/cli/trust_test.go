package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/taskkey"
)

// A path that leaves its directory in any spelling is bad input (exit 2,
// words about the path, nothing recorded), never "cannot reach GitHub";
// an odd but valid path is written exactly there and found again by a
// rerun.
func TestFilePutPathsEndToEnd(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	for _, p := range []string{"docs/", "a//b.md", "%2e%2e/x.md", "%2E%2e/x.md", "docs/../x.md", ".%2e/x.md", "./a.md", "zero\u200bwidth.md"} {
		o := w.run("", nil, "file", "put", p, "--task", "T-refused", "--branch", "main", "-m", "add", "--content", "x", "--repo", testRepo)
		if o.code != failure.ExitUsage || !strings.Contains(o.stderr, "invalid path") || strings.Contains(o.stderr, "cannot reach") {
			t.Errorf("file put %q: exit %d, stderr %q; want exit %d about the path", p, o.code, o.stderr, failure.ExitUsage)
		}
	}
	if _, err := os.Stat(w.ledger); err == nil {
		t.Errorf("refused paths opened the ledger %s; bad input must be refused before it", w.ledger)
	}
	// And with a ledger in place: still no entry for them.
	if o := w.run("", nil, "init"); o.code != 0 {
		t.Fatalf("init: %d %s", o.code, o.stderr)
	}
	for _, p := range []string{"docs/", "a//b.md"} {
		if o := w.run("", nil, "file", "put", p, "--task", "T-refused", "--branch", "main", "-m", "add", "--content", "x", "--repo", testRepo); o.code != failure.ExitUsage {
			t.Errorf("file put %q with a ledger: exit %d, want %d", p, o.code, failure.ExitUsage)
		}
	}
	if st := w.run("", nil, "status", "--json"); st.code != 0 || strings.Contains(st.stdout, "gk1_") {
		t.Errorf("status after refused paths: exit %d, %s; want no entry", st.code, st.stdout)
	}
	for _, p := range []string{"C#/README.md", "notes/what?.md", "docs/50%25.md", "a b/ü.md"} {
		args := []string{"file", "put", p, "--task", "T-" + p, "--branch", "main", "-m", "add", "--content", "at " + p, "--repo", testRepo, "--json"}
		if r := w.result(args...); r.Outcome != "created" {
			t.Errorf("file put %q: outcome %s, want created", p, r.Outcome)
		}
		if got, ok := w.fake.FileContent(testOwner, testName, "main", p); !ok || string(got) != "at "+p {
			t.Errorf("file put %q did not land there; the branch holds %v", p, w.fake.Files(testOwner, testName, "main"))
		}
		lost := w.run("", map[string]string{"GHONCE_LEDGER": filepath.Join(t.TempDir(), "fresh.db")}, args...)
		if lost.code != 0 || !strings.Contains(lost.stdout, `"outcome":"found"`) {
			t.Errorf("file put %q with the ledger lost: exit %d %s %s, want found", p, lost.code, lost.stdout, lost.stderr)
		}
	}
}

// A ledger location that cannot be read one way only is bad input (exit
// 2): nothing is created, and a password in doubt is not printed.
func TestLedgerLocationsRefused(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	for _, tc := range []struct{ ledger, want, secret string }{
		{"", "ledger location is empty", ""},
		{"file:door18-uri.db?mode=ro", "SQLite URI", ""},
		{"FILE:door18-uri.db", "SQLite URI", ""},
		{"postgres://ghonceu:Secret#1@127.0.0.1/db", "percent-encode the password (`@` is `%40`)", "Secret"},
		{"postgres://ghonceu:p@ss@prod@127.0.0.1/db", "percent-encode the password (`@` is `%40`)", "prod"},
		{"postgres://ghonceu@127.0.0.1/db?password=Zq;7kw9;xyP&sslmode=disable", "a raw `;` in the query string", "7kw9"},
		{"postgres://ghonceu@127.0.0.1/db?password=Zq7k&w9xy&Pq3m", "a query parameter without `=`", "w9xy"},
		{"application_name=bot password=Zq7kw9xyP host=db", "keyword/value connection string", "7kw9"},
	} {
		for _, args := range [][]string{
			{"status", "--ledger", tc.ledger},
			{"exec", "--task", "T", "--step", "s", "--ledger", tc.ledger, "--json", "--", "true"},
		} {
			o := w.run("", nil, args...)
			if o.code != failure.ExitUsage || !strings.Contains(o.stderr, tc.want) {
				t.Errorf("%q: exit %d, stderr %q; want exit %d saying %q", args, o.code, o.stderr, failure.ExitUsage, tc.want)
			}
			if tc.secret != "" && strings.Contains(o.stdout+o.stderr, tc.secret) {
				t.Errorf("%q printed the password: %s %s", args, o.stdout, o.stderr)
			}
		}
	}
	for _, name := range []string{"file:door18-uri.db?mode=ro", "file:door18-uri.db", "FILE:door18-uri.db", "file:"} {
		if _, err := os.Stat(name); err == nil {
			t.Errorf("a SQLite URI made %q in the working directory", name)
			os.RemoveAll(name)
		}
	}
}

// --repo takes what gh takes and every spelling is one key; a host other
// than the API's is refused rather than acted on as a namesake.
func TestRepoFormsAreOneRepository(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	u, err := url.Parse(w.fake.URL())
	if err != nil {
		t.Fatal(err)
	}
	want := w.run("", nil, "key", "--task", "T", "--step", "s", "--kind", "issue", "--repo", testRepo)
	if want.code != 0 {
		t.Fatalf("key: %d %s", want.code, want.stderr)
	}
	for _, r := range []string{
		" " + testRepo + "\n", testRepo + ".git", u.Host + "/" + testRepo,
		"http://" + u.Host + "/" + testRepo + ".git", "ssh://git@" + u.Host + "/" + testRepo + ".git",
	} {
		o := w.run("", nil, "key", "--task", "T", "--step", "s", "--kind", "issue", "--repo", r)
		if o.code != 0 || o.stdout != want.stdout {
			t.Errorf("--repo %q: exit %d, key %q %s; want the key of %s, %q", r, o.code, o.stdout, o.stderr, testRepo, want.stdout)
		}
	}
	// The advice names the API root that serves the repository's host:
	// api.github.com for github.com (github.com/api/v3 is no API root),
	// HOST/api/v3 for a GitHub Enterprise Server.
	for _, c := range []struct{ repo, want string }{
		{"https://github.com/" + testRepo + ".git", "is on github.com, but GITHUB_API_URL is " + w.fake.URL() + ": for github.com, unset GITHUB_API_URL or set GITHUB_API_URL=https://api.github.com, or drop the host"},
		{"https://www.github.com/" + testRepo, "for github.com, unset GITHUB_API_URL or set GITHUB_API_URL=https://api.github.com"},
		{"https://ghe.example.com/" + testRepo, "is on ghe.example.com, but GITHUB_API_URL is " + w.fake.URL() + ": for GitHub Enterprise Server, set GITHUB_API_URL=https://ghe.example.com/api/v3, or drop the host"},
	} {
		o := w.run("", nil, "issue", "create", "--task", "T", "--title", "t", "--body", "b", "--repo", c.repo)
		if o.code != failure.ExitUsage || !strings.Contains(o.stderr, c.want) || strings.Contains(o.stderr, "github.com/api/v3") {
			t.Errorf("--repo %s against another API: exit %d, %s\nwant exit 2 saying %q", c.repo, o.code, o.stderr, c.want)
		}
	}
	if r := w.result("issue", "create", "--task", "T-git", "--title", "t", "--body", "b", "--repo", testRepo+".git", "--json"); r.Outcome != "created" || r.Repo != testRepo {
		t.Errorf("issue create --repo %s.git: %s in %q, want created in %s", testRepo, r.Outcome, r.Repo, testRepo)
	}
}

// --json writes strings as they are: "&", "<" and ">" are not escaped.
func TestJSONDoesNotEscapeHTML(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	o := w.run("", nil, "issue", "create", "--task", "T<&>", "--title", "a & <b>", "--body", "b", "--repo", testRepo, "--json")
	if o.code != 0 || !strings.Contains(o.stdout, `"task":"T<&>"`) || strings.Contains(o.stdout, `\u0026`) || strings.Contains(o.stdout, `\u003c`) {
		t.Errorf("exit %d, stdout %s; want the task written as T<&>", o.code, o.stdout)
	}
	bad := w.run("", nil, "issue", "create", "--task", "T<&>", "--title", "t", "--body", "b", "--repo", "a&b", "--json")
	if bad.code != failure.ExitUsage || strings.Contains(bad.stdout, `\u0026`) || !strings.Contains(bad.stdout, `a&b`) {
		t.Errorf("a failure's JSON: exit %d, stdout %s; want a&b unescaped", bad.code, bad.stdout)
	}
}

// Advice names only flags the verb takes: file put has no --on-change.
func TestChangeAdviceNamesTheVerbsFlags(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	put := func(content string) cliRun {
		return w.run("", nil, "file", "put", "notes.md", "--task", "T", "--branch", "main", "-m", "add", "--content", content, "--repo", testRepo)
	}
	if o := put("one\n"); o.code != 0 {
		t.Fatalf("file put: %d %s", o.code, o.stderr)
	}
	o := put("two\n")
	if o.code != 0 || !strings.Contains(o.stderr, "content differs") || strings.Contains(o.stderr, "--on-change") || !strings.Contains(o.stderr, "another --step") {
		t.Errorf("file put with other content: exit %d, stderr %q; want the change named, --step advised, no --on-change", o.code, o.stderr)
	}
	issue := func(body string) cliRun {
		return w.run("", nil, "issue", "create", "--task", "T", "--title", "Flaky test in auth", "--body", body, "--repo", testRepo)
	}
	if o := issue("b"); o.code != 0 {
		t.Fatalf("issue create: %d %s", o.code, o.stderr)
	}
	if o := issue("b, reworded"); o.code != 0 || !strings.Contains(o.stderr, "--on-change update edits it") {
		t.Errorf("issue create with another body: exit %d, stderr %q; want --on-change advised", o.code, o.stderr)
	}
}

// With the ledger lost (a fresh runner), a run compares its description
// with the artifact it finds on GitHub: payload_changed and changed come
// from the artifact's own title and body (less ghonce's marker), and
// --on-change update edits it. A found issue says its state.
func TestLostLedgerComparesWithTheArtifact(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	fresh := func() map[string]string {
		return map[string]string{"GHONCE_LEDGER": filepath.Join(t.TempDir(), "fresh.db")}
	}
	issue := func(env map[string]string, title string, extra ...string) (cliRun, outcome.Result) {
		args := append([]string{"issue", "create", "--task", "T-lost", "--title", title, "--body", "the body", "--repo", testRepo, "--json"}, extra...)
		o := w.run("", env, args...)
		var r outcome.Result
		if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
			t.Fatalf("%v: exit %d %q %s", args, o.code, o.stdout, o.stderr)
		}
		return o, r
	}
	// A reworded retry of the first ("(retry)" added) under the step named:
	// the same act.
	const first, second = "Fix the flaky auth test", "Fix the flaky auth test (retry)"
	if _, r := issue(nil, first); r.Outcome != outcome.Created || r.ArtifactState != "open" {
		t.Fatalf("create: %+v", r)
	}
	if _, r := issue(fresh(), first); r.Outcome != outcome.Found || r.PayloadChanged {
		t.Errorf("the same description, ledger lost: %s, payload_changed %v; want found, unchanged", r.Outcome, r.PayloadChanged)
	}
	o, r := issue(fresh(), second, "--step", "issue-create")
	if r.Outcome != outcome.Found || !r.PayloadChanged || len(r.Changed) != 1 || r.Changed[0] != "title" || !strings.Contains(r.Warning, "--on-change update") {
		t.Errorf("another title, ledger lost: %+v (stderr %s); want found, changed [title], the --on-change advice", r, o.stderr)
	}
	if got := w.fake.Issues(testOwner, testName)[0].Title; got != first {
		t.Errorf("warn changed the issue's title to %q", got)
	}
	if _, r := issue(fresh(), second, "--on-change", "update"); !r.Updated || !r.PayloadChanged {
		t.Errorf("--on-change update, ledger lost: %+v; want updated", r)
	}
	if got := w.fake.Issues(testOwner, testName)[0].Title; got != second {
		t.Errorf("after --on-change update the issue's title is %q, want %q", got, second)
	}
	if n := len(w.fake.Issues(testOwner, testName)); n != 1 {
		t.Errorf("%d issues, want 1", n)
	}

	// A closed issue of ours: found, and the words and JSON say closed.
	k := w.run("", nil, "key", "--task", "T-closed", "--step", "issue-create", "--kind", "issue", "--repo", testRepo)
	key := strings.TrimSpace(k.stdout)
	n := w.fake.SeedIssue(testOwner, testName, testLogin, fixtures.SeedIssue{Title: "Old", Body: taskkey.WithMarker(key, "b"), Labels: []string{taskkey.Label(key)}, State: "closed"})
	o = w.run("", fresh(), "issue", "create", "--task", "T-closed", "--title", "Old", "--body", "b", "--repo", testRepo)
	if o.code != 0 || !strings.Contains(o.stderr, fmt.Sprintf("found issue #%d (closed)", n)) {
		t.Errorf("a closed issue: exit %d, stderr %q; want it found and called closed", o.code, o.stderr)
	}
	o = w.run("", fresh(), "issue", "create", "--task", "T-closed", "--title", "Old", "--body", "b", "--repo", testRepo, "--json")
	if !strings.Contains(o.stdout, `"artifact_state":"closed"`) {
		t.Errorf("--json for a closed issue: %s; want artifact_state closed", o.stdout)
	}
}
