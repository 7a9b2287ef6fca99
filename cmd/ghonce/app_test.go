package main_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/taskkey"
)

const (
	testAppID = 31337
	appBot    = "ghonce-agent[bot]"
)

// appWorld is a world whose runs authenticate as a GitHub App installed on
// the repository, with no token; the key pair is generated at run time.
func appWorld(t *testing.T) (*world, []string, string) {
	t.Helper()
	w := newWorld(t)
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	w.fake.AddApp(fixtures.App{ID: testAppID, Slug: "ghonce-agent", PublicKey: &k.PublicKey})
	w.fake.InstallApp(testAppID, owner, name)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	env := w.envWithout([]string{"GH_TOKEN"}, "GHONCE_APP_ID="+strconv.Itoa(testAppID), "GHONCE_APP_PRIVATE_KEY="+keyPEM)
	return w, env, keyPEM
}

// As an App: SLUG[bot] is ours without --trust-author, a stranger's
// look-alike is not, and with the ledger lost the App's comment is found.
func TestGitHubAppIdentity(t *testing.T) {
	t.Parallel()
	w, env, _ := appWorld(t)
	n := w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
	key := w.key("ISSUE-1", "issue-comment", "comment", strconv.Itoa(n))
	w.fake.SeedComment(owner, name, n, stranger, taskkey.WithMarker(key, "A look-alike."))
	args := []string{"issue", "comment", strconv.Itoa(n), "--task", "ISSUE-1", "--body", "On it.", "--json", "--ledger", w.ledger, "--repo", repo}

	ours := func() []fakegithub.Comment {
		var out []fakegithub.Comment
		for _, c := range w.fake.Comments(owner, name, n) {
			if c.Author == appBot {
				out = append(out, c)
			}
		}
		return out
	}
	for i, want := range []string{"created", "skipped", "found"} {
		if want == "found" {
			w.deleteLedger()
		}
		o := w.execEnv(nil, env, args...)
		wantExit(t, o, 0, "comment as the App, run "+strconv.Itoa(i+1))
		var r result
		oneJSON(t, o.Stdout, &r)
		if r.Outcome != want || len(ours()) != 1 {
			t.Fatalf("run %d: outcome %q, %d comments by %s; want %s and 1\n%s", i+1, r.Outcome, len(ours()), appBot, want, o.Stderr)
		}
		if strings.Contains(o.Stderr, "BEGIN RSA") || strings.Contains(o.Stdout+o.Stderr, "ghs_") {
			t.Fatalf("key or token material in the output:\n%s", o.Stderr)
		}
	}
	if got := len(w.fake.Comments(owner, name, n)); got != 2 {
		t.Fatalf("%d comments, want the stranger's look-alike and the App's", got)
	}
}

// App misconfigurations stop the run before anything is recorded or
// written, with exit 2 (bad key) or 1 (GitHub refused), and never print
// the key.
func TestGitHubAppErrors(t *testing.T) {
	t.Parallel()
	w, env, keyPEM := appWorld(t)
	keyFile := filepath.Join(w.dir, "app.pem")
	if err := os.WriteFile(keyFile, []byte(keyPEM[:len(keyPEM)/2]), 0o600); err != nil {
		t.Fatal(err)
	}
	w.fake.AddRepo(owner, "not-installed", "main")
	args := func(r string) []string {
		return []string{"issue", "create", "--task", "T", "--title", "x", "--body", "y", "--ledger", w.ledger, "--repo", r}
	}
	for _, c := range []struct {
		name string
		env  []string
		repo string
		exit int
		hint string
	}{
		{"malformed key", []string{"GHONCE_APP_PRIVATE_KEY_FILE=" + keyFile}, repo, 2, "parse github app private key"},
		{"wrong app id", []string{"GHONCE_APP_ID=4040"}, repo, 1, "check that app id 4040"},
		{"not installed", nil, owner + "/not-installed", 1, "not installed on " + owner + "/not-installed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			writes, before := w.fake.Writes(), len(w.fake.Requests())
			o := w.execEnv(nil, append(append([]string(nil), env...), c.env...), args(c.repo)...)
			wantExit(t, o, c.exit, c.name)
			if !strings.Contains(o.Stderr, c.hint) {
				t.Fatalf("stderr lacks %q:\n%s", c.hint, o.Stderr)
			}
			if strings.Contains(o.Stderr, "PRIVATE KEY-----") || strings.Contains(o.Stderr, keyPEM[40:80]) {
				t.Fatalf("key material in stderr:\n%s", o.Stderr)
			}
			for _, q := range w.fake.Requests()[before:] {
				if q.Method != "GET" && !strings.HasPrefix(q.Path, "/app/installations/") {
					t.Fatalf("%s %s reached GitHub, want nothing but the App's own token requests", q.Method, q.Path)
				}
			}
			if w.fake.Writes() != writes {
				t.Fatal("a write reached a repository")
			}
			if _, err := os.Stat(w.ledger); err == nil && len(w.status()) != 0 {
				t.Fatalf("an entry was recorded: %v", w.status())
			}
		})
	}
}

// branch create --from resolves the ref and creates the branch on one
// client: the App's handshake (GET /app, finding the installation, minting
// a token) happens once per run, not once for --from and again to act.
func TestGitHubAppHandshakeOncePerRun(t *testing.T) {
	t.Parallel()
	w, env, _ := appWorld(t)
	before := len(w.fake.Requests())
	o := w.execEnv(nil, env, "branch", "create", "agent/from-main", "--from", "main", "--task", "T", "--json", "--ledger", w.ledger, "--repo", repo)
	wantExit(t, o, 0, "branch create --from as the App")
	count := map[string]int{}
	for _, q := range w.fake.Requests()[before:] {
		if q.Path == "/app" || strings.HasPrefix(q.Path, "/app/") || strings.HasSuffix(q.Path, "/installation") {
			count[q.Method+" "+q.Path]++
		}
	}
	if len(count) == 0 {
		t.Fatal("no App request reached the fake: the test proves nothing")
	}
	for req, n := range count {
		if n != 1 {
			t.Errorf("%s sent %d times in one run, want once (all: %v)", req, n, count)
		}
	}
}
