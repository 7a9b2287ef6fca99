// Package appauth authenticates ghonce as a GitHub App: it signs a JWT with
// the app's private key, learns the app's slug (GET /app) so that
// "SLUG[bot]" counts as the author of ghonce's artifacts, finds the app's
// installation on the repository (GET /repos/{o}/{r}/installation) unless
// it is given, and mints installation tokens
// (POST /app/installations/{id}/access_tokens), minting a new one ahead of
// the old one's expiry.
//
// No error of this package contains key material or a token.
//
// GitHub docs: https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app
package appauth

import (
	"bytes"
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/oauth2"

	"github.com/ghonce/ghonce/effect"
)

// ErrBadKey matches errors about the private key itself (exit 2 in the CLI).
var ErrBadKey = errors.New("github app private key cannot be used")

const (
	// jwtBackdate is how far in the past a JWT's "iat" is set, so that a
	// runner whose clock is a little ahead of GitHub's is not refused.
	jwtBackdate = 60 * time.Second
	// jwtLifetime keeps "exp" under GitHub's limit of 10 minutes after "iat".
	jwtLifetime = 9 * time.Minute
	// refreshAhead is how long before its expiry a token is replaced, so no
	// request leaves with a token that expires on the way.
	refreshAhead = 5 * time.Minute
	// defaultTimeout bounds one exchange with GitHub.
	defaultTimeout = 30 * time.Second
)

// Config says which app to authenticate as, and where.
type Config struct {
	AppID int64
	// PrivateKey is the PEM the app's settings page generated (PKCS#1
	// "RSA PRIVATE KEY", or PKCS#8 "PRIVATE KEY").
	PrivateKey []byte
	// InstallationID is the installation to mint tokens for; 0 finds the
	// app's installation on Owner/Repo.
	InstallationID int64
	Owner, Repo    string
	// BaseURL is the REST API root (default https://api.github.com/; GHES
	// https://HOST/api/v3/).
	BaseURL    string
	HTTPClient *http.Client
	Now        func() time.Time
	UserAgent  string
	// Minted, if set, is told each installation token minted, before Token
	// returns it and so before its first use: the CLI scrubs it from what it
	// prints and, inside GitHub Actions, has the runner mask it.
	Minted func(token string)
}

// App is an authenticated GitHub App. It is safe for concurrent use.
type App struct {
	cfg  Config
	key  *rsa.PrivateKey
	base *url.URL
	hc   *http.Client

	mu      sync.Mutex
	slug    string
	install int64
	token   string
	expiry  time.Time
	minted  int
}

// New parses the key and checks the configuration; it sends nothing.
func New(cfg Config) (*App, error) {
	if cfg.AppID <= 0 {
		return nil, &effect.AdviceError{
			Err:    fmt.Errorf("configure github app: app id %d: want the numeric App ID from the app's settings page", cfg.AppID),
			Option: effect.Option{Name: "app-id"}, Step: "check %s",
		}
	}
	key, err := parseKey(cfg.PrivateKey)
	if err != nil {
		return nil, err
	}
	if cfg.InstallationID == 0 && (cfg.Owner == "" || cfg.Repo == "") {
		return nil, &effect.AdviceError{
			Err:    errors.New("configure github app: no installation id and no repository to find it for"),
			Option: effect.Option{Name: "app-installation-id"}, Set: true,
		}
	}
	base := cfg.BaseURL
	if base == "" {
		base = "https://api.github.com/"
	}
	u, err := url.Parse(strings.TrimRight(base, "/") + "/")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("configure github app: api url %q is not an http(s) url", base)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "ghonce"
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	return &App{cfg: cfg, key: key, base: u, hc: hc, install: cfg.InstallationID}, nil
}

// parseKey parses a PEM-encoded RSA private key. A key pasted into an
// environment variable with literal "\n" sequences is accepted too. Its
// errors match ErrBadKey and never show the key.
func parseKey(p []byte) (*rsa.PrivateKey, error) {
	bad := func(why string) error {
		return &effect.AdviceError{
			Err:    fmt.Errorf("parse github app private key: %s: %w", why, ErrBadKey),
			Option: effect.Option{Name: "app-private-key"}, Step: "give the .pem file the app's settings page generated (%s)",
		}
	}
	p = bytes.TrimSpace(p)
	if len(p) == 0 {
		return nil, bad("it is empty")
	}
	if !bytes.Contains(p, []byte("\n")) && bytes.Contains(p, []byte(`\n`)) {
		p = bytes.ReplaceAll(p, []byte(`\n`), []byte("\n"))
	}
	block, _ := pem.Decode(p)
	if block == nil {
		return nil, bad("no complete PEM block (BEGIN RSA PRIVATE KEY ... END RSA PRIVATE KEY) found")
	}
	switch block.Type {
	case "RSA PRIVATE KEY":
		k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
		if err != nil {
			return nil, bad("the RSA PRIVATE KEY block does not parse")
		}
		return k, nil
	case "PRIVATE KEY":
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, bad("the PRIVATE KEY block does not parse")
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, bad("it is not an RSA key (GitHub Apps sign with RS256)")
		}
		return rk, nil
	}
	return nil, bad(fmt.Sprintf("a PEM block of type %q, want RSA PRIVATE KEY", block.Type))
}

// JWT returns a token that authenticates as the app for about 9 minutes:
// RS256, "iss" the app id, "iat" a minute in the past.
func (a *App) JWT() (string, error) {
	now := a.cfg.Now()
	t := jwt.NewWithClaims(jwt.SigningMethodRS256, jwt.RegisteredClaims{
		Issuer:    strconv.FormatInt(a.cfg.AppID, 10),
		IssuedAt:  jwt.NewNumericDate(now.Add(-jwtBackdate)),
		ExpiresAt: jwt.NewNumericDate(now.Add(jwtLifetime - jwtBackdate)),
	})
	s, err := t.SignedString(a.key)
	if err != nil {
		return "", fmt.Errorf("sign github app jwt: %w: %w", err, ErrBadKey)
	}
	return s, nil
}

// Slug returns the app's slug, read once with GET /app.
func (a *App) Slug(ctx context.Context) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.slug != "" {
		return a.slug, nil
	}
	var body struct {
		Slug string `json:"slug"`
	}
	if err := a.call(ctx, http.MethodGet, "app", "read github app (GET /app)", &body); err != nil {
		return "", err
	}
	if body.Slug == "" {
		return "", errors.New("read github app (GET /app): GitHub answered without a slug")
	}
	a.slug = body.Slug
	return a.slug, nil
}

// Bot is the login the app's installation tokens author as: "SLUG[bot]".
func (a *App) Bot(ctx context.Context) (string, error) {
	s, err := a.Slug(ctx)
	if err != nil {
		return "", err
	}
	return s + "[bot]", nil
}

// Token returns an installation token valid for at least a few minutes,
// minting one when there is none or the cached one is near its expiry.
func (a *App) Token(ctx context.Context) (string, time.Time, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.token != "" && a.cfg.Now().Add(refreshAhead).Before(a.expiry) {
		return a.token, a.expiry, nil
	}
	if a.install == 0 {
		var in struct {
			ID int64 `json:"id"`
		}
		path := "repos/" + url.PathEscape(a.cfg.Owner) + "/" + url.PathEscape(a.cfg.Repo) + "/installation"
		if err := a.call(ctx, http.MethodGet, path, "find github app installation on "+a.cfg.Owner+"/"+a.cfg.Repo, &in); err != nil {
			return "", time.Time{}, err
		}
		a.install = in.ID
	}
	var tok struct {
		Token     string    `json:"token"`
		ExpiresAt time.Time `json:"expires_at"`
	}
	path := "app/installations/" + strconv.FormatInt(a.install, 10) + "/access_tokens"
	if err := a.call(ctx, http.MethodPost, path, "mint installation token for installation "+strconv.FormatInt(a.install, 10), &tok); err != nil {
		return "", time.Time{}, err
	}
	if tok.Token == "" || tok.ExpiresAt.IsZero() {
		return "", time.Time{}, errors.New("mint installation token: GitHub answered without a token or expiry")
	}
	a.token, a.expiry = tok.Token, tok.ExpiresAt
	a.minted++
	if a.cfg.Minted != nil {
		a.cfg.Minted(a.token)
	}
	return a.token, a.expiry, nil
}

// TokenSource is an oauth2.TokenSource of installation tokens for
// ghcheck.Options.TokenSource. ctx bounds the requests that mint them.
func (a *App) TokenSource(ctx context.Context) oauth2.TokenSource { return tokenSource{ctx, a} }

type tokenSource struct {
	ctx context.Context
	a   *App
}

func (s tokenSource) Token() (*oauth2.Token, error) {
	t, exp, err := s.a.Token(s.ctx)
	if err != nil {
		return nil, err
	}
	return &oauth2.Token{AccessToken: t, TokenType: "token", Expiry: exp}, nil
}

// Prepare reads the slug and mints the first token, so that a wrong app
// id, a key GitHub does not know, an app not installed on the repository or
// a runner clock GitHub refuses is reported before anything is recorded or
// sent in the app's name.
func (a *App) Prepare(ctx context.Context) error {
	if _, err := a.Slug(ctx); err != nil {
		return err
	}
	_, _, err := a.Token(ctx)
	return err
}

// call sends one JWT-authenticated request and decodes a 2xx answer into
// out. The caller holds a.mu.
func (a *App) call(ctx context.Context, method, path, what string, out any) error {
	j, err := a.JWT()
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base.String()+path, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	req.Header.Set("Authorization", "Bearer "+j)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	req.Header.Set("User-Agent", a.cfg.UserAgent)
	resp, err := a.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is ours; the error is what matters
		}
		return fmt.Errorf("%s: GitHub could not be reached: %w", what, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: read answer: %w", what, err)
	}
	if resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s: parse answer: %w", what, err)
		}
		return nil
	}
	var e struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal(b, &e)
	return a.refused(&Error{Op: what, Status: resp.StatusCode, Message: e.Message}, path)
}

// Error is GitHub's refusal of an app request.
type Error struct {
	Op      string
	Status  int
	Message string // GitHub's message
	hint    string
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: GitHub answered %d", e.Op, e.Status)
	if e.Message != "" {
		msg += " (" + e.Message + ")"
	}
	if e.hint != "" {
		msg += ": " + e.hint
	}
	return msg
}

// refused is e with what to do about it: a hint in its text, or the
// option to check as advice.
func (a *App) refused(e *Error, path string) error {
	id := strconv.FormatInt(a.cfg.AppID, 10)
	advise := func(o string, set bool, step string) error {
		return &effect.AdviceError{Err: e, Option: effect.Option{Name: o}, Set: set, Step: step}
	}
	switch st := e.Status; {
	case st == http.StatusUnauthorized && (strings.Contains(e.Message, "'exp'") || strings.Contains(e.Message, "'iat'")):
		e.hint = "GitHub refused the JWT's times: the runner's clock is off; it must be within about a minute of GitHub's (check NTP), then run again"
	case st == http.StatusUnauthorized:
		return advise("app-id", false, "check that app id "+id+" (%s) is the App ID on the app's settings page and the private key is one of that app's keys")
	case st == http.StatusNotFound && strings.HasSuffix(path, "/installation"):
		e.hint = "app " + id + " is not installed on " + a.cfg.Owner + "/" + a.cfg.Repo
		return advise("app-installation-id", true, "install it on the repository (the app's settings page, Install App), or %s")
	case st == http.StatusNotFound && strings.HasSuffix(path, "/access_tokens"):
		e.hint = "installation " + strconv.FormatInt(a.install, 10) + " is not an installation of app " + id
		return advise("app-installation-id", false, "check %s, or leave it out to find the installation for the repository")
	case st == http.StatusForbidden:
		e.hint = "the installation may be suspended or lack permissions: check the app's installation settings"
	}
	return e
}

// Minted is how many installation tokens this App minted (for tests and
// status lines).
func (a *App) Minted() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.minted
}
