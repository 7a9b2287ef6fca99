package guard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
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

// writeKinds are the kinds the transport carries: every kind whose Face
// declares a REST write. Each is made from its Face.Example, valid in the
// repository testworld's SeedExamples makes.
func writeKinds() []string {
	var out []string
	for _, k := range reconcile.Kinds() {
		if f, _ := kinds.FaceOf(k); f.Write != "" && f.Example != "" {
			out = append(out, k)
		}
	}
	return out
}

// job is one go-github write, as a bot makes it: a kind's example under
// Task, with its text reworded when Reword says so.
type job struct {
	Kind, Task string
	Reword     bool
}

// act is j's request: the method and path of its kind's Face.Write, the
// path's {params} bound from the example, and a body of the example's
// values for every body field the write carries (reconcile.BodyFields,
// named as Face.Wire names them). A field the example leaves out is left
// out, as go-github leaves out a nil field. Reworded, the example's body
// is another text: the act's own text after an unanswered attempt, a
// text besides it (a title names the act) otherwise (docs/design/same-act.md).
type act struct {
	kind, method, path string
	face               effect.Face
	example            map[string]any
	body               map[string]any
}

func actOf(j job) (act, error) {
	f, _ := kinds.FaceOf(j.Kind)
	a := act{kind: j.Kind, face: f, body: map[string]any{}}
	d := json.NewDecoder(strings.NewReader(f.Example))
	d.UseNumber()
	if err := d.Decode(&a.example); err != nil {
		return a, fmt.Errorf("%s: its example %s: %v", j.Kind, f.Example, err)
	}
	if s, ok := a.example["body"].(string); ok && j.Reword {
		a.example["body"] = s + " (reworded on the retry)"
	}
	method, path, _ := strings.Cut(f.Write, " ")
	a.method, a.path = method, bind(path, a.example)
	for _, field := range reconcile.BodyFields(j.Kind) {
		name, prefix := field, ""
		if w, ok := f.Wire[field]; ok {
			prefix, _, _ = strings.Cut(w, "{")
			name, _ = effect.WireParam(w)
		}
		v, ok := a.example[name]
		if !ok {
			continue
		}
		if s, ok := v.(string); ok {
			v = prefix + s
		}
		a.body[field] = v
	}
	return a, nil
}

// payload is the body go-github sends: a write that carries one list
// sends it bare, as go-github's AddLabelsToIssue does (the guard takes
// either shape; TestEveryDeclaredWriteIsGuarded sends the object).
func (a act) payload() any {
	if carried := reconcile.BodyFields(a.kind); len(carried) == 1 {
		if l, ok := a.body[carried[0]].([]any); ok {
			return l
		}
	}
	return a.body
}

// bind fills path's {params} (and {param...}) from fields, owner and repo
// the world's repository, each segment escaped.
func bind(path string, fields map[string]any) string {
	p, q, hasQuery := strings.Cut(path, "?")
	fill := func(s string, esc func(string) string) string {
		parts := strings.Split(s, "{")
		for i := 1; i < len(parts); i++ {
			param, after, _ := strings.Cut(parts[i], "}")
			param = strings.TrimSuffix(param, "...")
			v := fmt.Sprint(fields[param])
			switch param {
			case "owner":
				v = owner
			case "repo":
				v = name
			}
			parts[i] = esc(v) + after
		}
		return strings.Join(parts, "")
	}
	escPath := func(s string) string {
		segs := strings.Split(s, "/")
		for i := range segs {
			segs[i] = url.PathEscape(segs[i])
		}
		return strings.Join(segs, "/")
	}
	if hasQuery {
		return fill(p, escPath) + "?" + fill(q, url.QueryEscape)
	}
	return fill(p, escPath)
}

// got is what go-github returned: the answer's JSON, as go-github's Do
// decodes it, and the guard's outcome and key.
type got struct {
	Body    json.RawMessage `json:"body"`
	Outcome string          `json:"outcome"` // X-Ghonce-Outcome
	Key     string          `json:"key"`     // X-Ghonce-Key
	Status  int             `json:"status"`
}

// send makes j's write through gh with go-github's NewRequest and Do, under
// j's task, and reports what go-github decoded.
func send(ctx context.Context, gh *github.Client, j job) (got, error) {
	a, err := actOf(j)
	if err != nil {
		return got{}, err
	}
	req, err := gh.NewRequest(a.method, a.path, a.payload())
	if err != nil {
		return got{}, err
	}
	var g got
	resp, err := gh.Do(guard.WithStep(ctx, j.Task, ""), req, &g.Body)
	if resp != nil {
		g.Outcome, g.Key, g.Status = resp.Header.Get("X-Ghonce-Outcome"), resp.Header.Get("X-Ghonce-Key"), resp.StatusCode
	}
	return g, err
}

// isWrite reports whether a request the fake logged or committed is j's
// write: its method and path.
func (a act) isWrite(method, path string) bool {
	p, _ := url.PathUnescape(a.path)
	return method == a.method && path == "/"+p
}

// made counts the writes of a's kind GitHub stored: a duplicate adds one.
func made(fake *fixtures.Server, a act) int {
	n := 0
	for _, r := range fake.Requests() {
		if a.isWrite(r.Method, r.Path) && (r.Status/100 == 2 || r.Fault == fixtures.DropAfterCommit) {
			n++
		}
	}
	return n
}

// readBack is the artifact c stored, as GitHub's GETs of the kind's
// Face.ReadBack answer, read with a plain client: {id} and {number} are
// the commit's, every other {param} the example's field.
func readBack(t testing.TB, w *world, a act, c fixtures.Commit) []any {
	t.Helper()
	fields := map[string]any{}
	for k, v := range a.example {
		fields[k] = v
	}
	if c.Number != 0 {
		fields["number"] = c.Number
	}
	if c.ID != 0 {
		fields["id"] = c.ID
	}
	plain := w.gh(http.DefaultTransport)
	var out []any
	for _, path := range a.face.ReadBack {
		req, err := plain.NewRequest(http.MethodGet, bind(path, fields), nil)
		if err != nil {
			t.Fatal(err)
		}
		var b json.RawMessage
		if _, err := plain.Do(context.Background(), req, &b); err != nil {
			t.Fatalf("%s: read back %s: %v", a.kind, path, err)
		}
		out = append(out, decode(t, a.kind, b))
	}
	return out
}

// decode is b's JSON, a number as written.
func decode(t testing.TB, kind string, b []byte) any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		t.Fatalf("%s: %s: %v", kind, b, err)
	}
	return v
}

// identity are the fields that name an artifact on GitHub.
var identity = []string{"id", "number", "sha", "node_id", "html_url", "url", "ref"}

// sameArtifact fails t unless answer (go-github's) names the artifact
// GitHub read back (want): every identifying field the read back has, the
// answer has alike, a url among them. A second ReadBack is the commit a
// contents write answers with beside the file ({content, commit}),
// compared by its sha and html_url (its url is the git commit's in the
// answer, the repository commit's in the read back).
func sameArtifact(t testing.TB, kind string, answer json.RawMessage, want []any) {
	t.Helper()
	a, urls := decode(t, kind, answer), 0
	var agree func(where string, a, w any, keys []string)
	agree = func(where string, a, w any, keys []string) {
		switch w := w.(type) {
		case []any:
			as, _ := a.([]any)
			if len(as) != len(w) || len(w) == 0 {
				t.Fatalf("%s: go-github got %d at %s, GitHub holds %d", kind, len(as), where, len(w))
			}
			for i := range w {
				agree(fmt.Sprintf("%s[%d]", where, i), as[i], w[i], keys)
			}
		case map[string]any:
			am, _ := a.(map[string]any)
			for _, k := range keys {
				if v, ok := w[k]; ok && fmt.Sprint(am[k]) != fmt.Sprint(v) {
					t.Fatalf("%s: go-github got %s%s %v, GitHub holds %v\nanswer: %s", kind, where, k, am[k], v, answer)
				} else if ok && strings.HasSuffix(k, "url") && v != "" {
					urls++
				}
			}
			if o, ok := w["object"]; ok {
				agree(where+"object.", am["object"], o, keys)
			}
		}
	}
	if len(want) == 2 {
		am, _ := a.(map[string]any)
		agree("content.", am["content"], want[0], identity)
		agree("commit.", am["commit"], want[1], []string{"sha", "html_url"})
	} else {
		agree("", a, want[0], identity)
	}
	if urls == 0 {
		t.Fatalf("%s: go-github's answer has no URL of the artifact: %s", kind, answer)
	}
}

// world is the shared test world (testworld) with what every kind's
// example names (SeedExamples: issue #1, pull request #2) and a pushed
// branch fix-42.
type world struct {
	*testworld.World
	issue, pull int
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{World: testworld.New(t)}
	w.SeedExamples()
	w.Push("fix-42")
	w.issue, w.pull = 1, 2
	return w
}

// client is a plain go-github client over a guard on the ledger at path.
// Settle: as agentMain's.
func (w *world) client(t testing.TB, path string, base http.RoundTripper) *github.Client {
	t.Helper()
	ctx := context.Background()
	l, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	tr, err := guard.New(base, guard.Options{Ledger: l, LedgerNew: l.Created(), Settle: 200 * time.Millisecond, Getenv: func(string) string { return "" }})
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
