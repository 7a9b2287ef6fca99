package guard_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/tests/testworld"
)

const (
	owner    = testworld.Owner
	name     = testworld.Name
	login    = testworld.Login
	token    = testworld.Token
	stranger = testworld.Stranger
)

// job is one write as a bot makes it through go-github: its kind's
// Face.Example, sent as the kind's REST write (Face.Write, Face.Wire),
// under Task; Text, when set, rewords its body (a file's commit message).
type job struct {
	Kind string
	Task string
	Text string
}

// got is what names the artifact in what go-github received, and the
// outcome.
type got struct {
	Number  int    `json:"number"`
	ID      int64  `json:"id"`
	URL     string `json:"url"` // html_url; a ref's url
	SHA     string `json:"sha"` // a ref's object's; a contents write's file's
	Labels  string `json:"labels"`
	Outcome string `json:"outcome"` // X-Ghonce-Outcome
	Status  int    `json:"status"`
}

// artifactOf reads got's artifact fields from a GitHub answer: an object
// (a contents write's: its file, content), or a list of labels.
func artifactOf(raw []byte) got {
	var list []struct{ Name string }
	if json.Unmarshal(raw, &list) == nil {
		var names []string
		for _, l := range list {
			names = append(names, l.Name)
		}
		return got{Labels: strings.Join(names, ",")}
	}
	var a struct {
		Number  int
		ID      int64
		HTMLURL string `json:"html_url"`
		URL     string
		SHA     string
		Object  struct{ SHA string }
		Content json.RawMessage // a contents write's file; a read's text
	}
	_ = json.Unmarshal(raw, &a)
	if strings.HasPrefix(string(a.Content), "{") {
		return artifactOf(a.Content)
	}
	return got{Number: a.Number, ID: a.ID, URL: cmp.Or(a.HTMLURL, a.URL), SHA: cmp.Or(a.SHA, a.Object.SHA)}
}

// example is j's kind's example, its text reworded to j.Text.
func (j job) example() (effect.Face, map[string]any) {
	f, _ := kinds.FaceOf(j.Kind)
	var ex map[string]any
	_ = json.Unmarshal([]byte(f.Example), &ex)
	for _, field := range []string{"body", "message"} {
		if _, ok := ex[field]; ok && j.Text != "" {
			ex[field] = j.Text
			break
		}
	}
	return f, ex
}

// fill puts in path's {param}s the repository and the values of vals.
func fill(path string, vals map[string]any) string {
	segs := strings.Split(path, "/")
	for i, seg := range segs {
		rest := ""
		if q := strings.Index(seg, "?"); q >= 0 {
			seg, rest = seg[:q], seg[q:]
		}
		if p, ok := effect.WireParam(seg); ok && strings.HasPrefix(seg, "{") {
			seg = map[string]string{"owner": owner, "repo": name}[p]
			if seg == "" {
				seg = fmt.Sprint(vals[p])
			}
		}
		if p, ok := effect.WireParam(rest); ok {
			rest = strings.Replace(rest, "{"+p+"}", fmt.Sprint(vals[p]), 1)
		}
		segs[i] = seg + rest
	}
	return strings.Join(segs, "/")
}

// write is j's REST write: its method, path and body.
func (j job) write() (method, path string, body map[string]any) {
	f, ex := j.example()
	method, path, _ = strings.Cut(f.Write, " ")
	body = map[string]any{}
	for _, field := range reconcile.BodyFields(j.Kind) {
		v, ok := ex[field]
		if w, wired := f.Wire[field]; wired {
			p, _ := effect.WireParam(w)
			prefix, _, _ := strings.Cut(w, "{")
			if v, ok = ex[p]; ok {
				v = prefix + fmt.Sprint(v)
			}
		}
		if ok {
			body[field] = v
		}
	}
	return method, fill(path, ex), body
}

// send makes j's write through gh, under j's task, and reports what
// go-github received.
func send(ctx context.Context, gh *github.Client, j job) (got, error) {
	method, path, body := j.write()
	req, err := gh.NewRequest(method, path, body)
	if err != nil {
		return got{}, err
	}
	var raw json.RawMessage
	resp, err := gh.Do(guard.WithStep(ctx, j.Task, ""), req, &raw)
	g := artifactOf(raw)
	if resp != nil {
		g.Outcome, g.Status = resp.Header.Get("X-Ghonce-Outcome"), resp.StatusCode
	}
	return g, err
}

// isWrite reports whether a request is j's kind's REST write.
func (j job) isWrite(method, path string) bool {
	m, p, _ := j.write()
	return method == m && strings.TrimPrefix(path, "/") == p
}

// ours counts the writes of j's kind that GitHub committed: what a
// duplicate would add to.
func ours(fake *fixtures.Server, j job) int {
	n := 0
	for _, r := range fake.Requests() {
		if j.isWrite(r.Method, r.Path) && (r.Status/100 == 2 || r.Fault == fixtures.DropAfterCommit) {
			n++
		}
	}
	return n
}

// readBack is GitHub's own answer for the artifact g names (the kind's
// first Face.ReadBack), through a plain client.
func (w *world) readBack(t *testing.T, j job, g got) got {
	t.Helper()
	f, ex := j.example()
	vals := maps.Clone(ex)
	if g.Number != 0 {
		vals["number"] = g.Number
	}
	if g.ID != 0 {
		vals["id"] = g.ID
	}
	plain := github.NewClient(nil).WithAuthToken(token)
	plain.BaseURL = mustURL(w.GitHub.URL())
	req, err := plain.NewRequest(http.MethodGet, fill(f.ReadBack[0], vals), nil)
	if err != nil {
		t.Fatal(err)
	}
	var raw json.RawMessage
	if _, err := plain.Do(context.Background(), req, &raw); err != nil {
		t.Fatal(err)
	}
	return artifactOf(raw)
}

// guarded are the kinds the transport carries: every kind with a REST
// write and an example.
func guarded() []string {
	var out []string
	for _, kind := range kinds.All() {
		if f, _ := kinds.FaceOf(kind); f.Write != "" && f.Example != "" {
			out = append(out, kind)
		}
	}
	return out
}

// world is the shared test world (testworld) with what every kind's
// example names (SeedExamples) and a pushed branch fix-42.
type world struct {
	*testworld.World
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{World: testworld.New(t)}
	w.SeedExamples()
	w.Push("fix-42")
	return w
}

func (w *world) job(kind, text string) job { return job{Kind: kind, Task: "ISSUE-42", Text: text} }

// client is a plain go-github client over a guard on the ledger at path.
func (w *world) client(t testing.TB, path string, base http.RoundTripper) *github.Client {
	t.Helper()
	ctx := context.Background()
	l, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	tr, err := guard.New(base, guard.Options{Ledger: l, LedgerNew: l.Created(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return w.gh(tr)
}

func (w *world) gh(tr http.RoundTripper) *github.Client {
	gh := github.NewClient(&http.Client{Transport: tr}).WithAuthToken(token)
	gh.BaseURL = mustURL(w.GitHub.URL())
	return gh
}

// agentEnv is what the agent process (TestMain) reads.
func agentEnv(w *world, ledgerPath string, j job) []string {
	b, _ := json.Marshal(j)
	return append(os.Environ(), "GUARD_TEST_AGENT="+string(b), "GUARD_TEST_URL="+w.GitHub.URL(), "GUARD_TEST_LEDGER="+ledgerPath)
}

func TestMain(m *testing.M) {
	if spec := os.Getenv("GUARD_TEST_AGENT"); spec != "" {
		os.Exit(agentMain(spec))
	}
	os.Exit(m.Run())
}

// agentMain is a bot's one write, in its own process so that a test can
// kill it: a plain github.NewClient over the guard, the ledger on disk.
func agentMain(spec string) int {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	l, err := sqlite.Open(ctx, os.Getenv("GUARD_TEST_LEDGER"), sqlite.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer l.Close()
	// Settle: the fake commits a create before it answers, so once the test
	// kills a run nothing of it is in flight; the default (GitHub's 10 s
	// limit plus a margin) would only slow every takeover here.
	tr, err := guard.New(http.DefaultTransport, guard.Options{Ledger: l, LedgerNew: l.Created(), Settle: 200 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	gh := github.NewClient(&http.Client{Transport: tr}).WithAuthToken(token)
	gh.BaseURL = mustURL(os.Getenv("GUARD_TEST_URL"))
	g, err := send(ctx, gh, j)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = json.NewEncoder(os.Stdout).Encode(g)
	return 0
}

func ledgerIn(t *testing.T) string { return filepath.Join(t.TempDir(), "ledger.db") }
