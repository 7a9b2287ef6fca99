package appauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/tests/testworld"
)

const appID = 123456

// clock is a settable time shared by the fake and the app.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newKey generates a key pair at run time: no private key is committed.
func newKey(t *testing.T) (*rsa.PrivateKey, []byte) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
}

type world struct {
	fake *fixtures.Server
	clk  *clock
	pem  []byte
}

func newWorld(t *testing.T) *world {
	t.Helper()
	clk := &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	fake := testworld.New(t, testworld.Fake(fixtures.Options{Now: clk.now})).GitHub // holds testworld.Repo, octo-org/hello-world
	fake.AddRepo("octo-org", "elsewhere", "main")
	k, p := newKey(t)
	fake.AddApp(fixtures.App{ID: appID, Slug: "ghonce-agent", PublicKey: &k.PublicKey})
	fake.InstallApp(appID, "octo-org", "hello-world")
	return &world{fake: fake, clk: clk, pem: p}
}

func (w *world) app(t *testing.T, mod func(*Config)) *App {
	t.Helper()
	cfg := Config{AppID: appID, PrivateKey: w.pem, Owner: "octo-org", Repo: "hello-world", BaseURL: w.fake.URL(), Now: w.clk.now}
	if mod != nil {
		mod(&cfg)
	}
	a, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// get reads the repository with tok and returns the status.
func (w *world) get(t *testing.T, tok, path string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, w.fake.URL()+path, nil)
	req.Header.Set("Authorization", "token "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func TestAppMintsAndRefreshesInstallationTokens(t *testing.T) {
	w := newWorld(t)
	var told []string // what Config.Minted was told, in order
	a := w.app(t, func(c *Config) { c.Minted = func(tok string) { told = append(told, tok) } })
	ctx := context.Background()
	if err := a.Prepare(ctx); err != nil {
		t.Fatal(err)
	}
	if bot, _ := a.Bot(ctx); bot != "ghonce-agent[bot]" {
		t.Fatalf("Bot = %q, want ghonce-agent[bot]", bot)
	}
	tok1, exp1, err := a.Token(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st := w.get(t, tok1, "repos/octo-org/hello-world"); st != http.StatusOK {
		t.Fatalf("GET repo with the installation token: %d", st)
	}
	// GitHub mints stateless tokens (ghs_APPID_JWT, about 520 characters,
	// two dots); the fake does too, and Minted heard of it before Token
	// returned it.
	if len(tok1) < 500 || strings.Count(tok1, ".") != 2 || len(told) != 1 || told[0] != tok1 {
		t.Fatalf("token of %d characters, %d dots; Minted told %d tokens: want the stateless token, told once", len(tok1), strings.Count(tok1, "."), len(told))
	}
	if st := w.get(t, tok1, "user"); st != http.StatusForbidden {
		t.Fatalf("GET /user with an installation token: %d, want 403 as on GitHub", st)
	}
	// Well within its hour the token is reused.
	w.clk.add(30 * time.Minute)
	if tok, _, _ := a.Token(ctx); tok != tok1 || w.fake.InstallationTokensMinted(appID) != 1 {
		t.Fatalf("after 30 minutes: a new token (minted %d), want the cached one", w.fake.InstallationTokensMinted(appID))
	}
	// Near its expiry a new one is minted, before the old one stops working.
	w.clk.add(exp1.Sub(w.clk.now()) - 2*time.Minute)
	tok2, exp2, err := a.Token(ctx)
	if err != nil || tok2 == tok1 || !exp2.After(exp1) || w.fake.InstallationTokensMinted(appID) != 2 {
		t.Fatalf("2 minutes before expiry: token changed=%v, expiry %v after %v, minted %d, err %v; want a fresh token", tok2 != tok1, exp2, exp1, w.fake.InstallationTokensMinted(appID), err)
	}
	if len(told) != 2 || told[1] != tok2 {
		t.Fatalf("Minted told %d tokens, want the refreshed one too", len(told))
	}
	w.clk.add(3 * time.Minute)
	if st := w.get(t, tok1, "repos/octo-org/hello-world"); st != http.StatusUnauthorized {
		t.Fatalf("expired token: %d, want 401", st)
	}
	if st := w.get(t, tok2, "repos/octo-org/hello-world"); st != http.StatusOK {
		t.Fatalf("refreshed token: %d, want 200", st)
	}
	// Through the oauth2 source, as ghcheck uses it.
	ot, err := a.TokenSource(ctx).Token()
	if err != nil || ot.AccessToken != tok2 {
		t.Fatalf("TokenSource: %v", err)
	}
}

func TestAppErrorsSayWhatToDo(t *testing.T) {
	w := newWorld(t)
	_, otherPEM := newKey(t)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"wrong app id", func(c *Config) { c.AppID = 999 }, "check that app id 999"},
		{"a key of another app", func(c *Config) { c.PrivateKey = otherPEM }, "private key is one of that app's keys"},
		{"not installed on the repository", func(c *Config) { c.Repo = "elsewhere" }, "not installed on octo-org/elsewhere"},
		{"installation of someone else", func(c *Config) { c.InstallationID = 77 }, "not an installation of app"},
		{"runner clock 15 minutes behind", func(c *Config) { c.Now = func() time.Time { return w.clk.now().Add(-15 * time.Minute) } }, "clock"},
		{"runner clock 15 minutes ahead", func(c *Config) { c.Now = func() time.Time { return w.clk.now().Add(15 * time.Minute) } }, "clock"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := w.app(t, c.mod).Prepare(ctx)
			if err == nil || !strings.Contains(said(err), c.want) {
				t.Fatalf("Prepare: %v, want an error saying %q", said(err), c.want)
			}
			if strings.Contains(err.Error(), "PRIVATE KEY") || strings.Contains(err.Error(), "ghs_") {
				t.Fatalf("error shows key or token material: %v", err)
			}
			if errors.Is(err, ErrBadKey) {
				t.Fatalf("a refusal by GitHub matched ErrBadKey: %v", err)
			}
		})
	}
}

func TestMalformedKeyIsRefusedBeforeAnythingIsSent(t *testing.T) {
	_, good := newKey(t)
	body := string(good[strings.Index(string(good), "\n")+1 : len(good)-40])
	for name, key := range map[string]string{
		"empty":     "",
		"not pem":   "hunter2-not-a-key",
		"truncated": "-----BEGIN RSA PRIVATE KEY-----\n" + body + "\n-----END RSA PRIVATE KEY-----\n",
		"a cert":    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := New(Config{AppID: appID, PrivateKey: []byte(key), InstallationID: 1})
			if !errors.Is(err, ErrBadKey) {
				t.Fatalf("New: %v, want ErrBadKey", err)
			}
			if strings.Contains(err.Error(), "hunter2") || (len(body) > 20 && strings.Contains(err.Error(), body[:20])) {
				t.Fatalf("error shows the key: %v", err)
			}
		})
	}
	// A key pasted into a variable with literal \n is accepted.
	if _, err := parseKey([]byte(strings.ReplaceAll(string(good), "\n", `\n`))); err != nil {
		t.Fatalf("escaped newlines: %v", err)
	}
}

// said is err as a front shows it: the next step of its advice, if any,
// after the advice's text (as failure.Say puts it, here in Go's words).
func said(err error) string {
	var a *effect.AdviceError
	if err == nil || !errors.As(err, &a) {
		return fmt.Sprint(err)
	}
	return strings.Replace(err.Error(), a.Error(), a.In(nil), 1)
}
