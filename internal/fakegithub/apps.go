package fakegithub

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// GitHub Apps on the fake: an App authenticates with an RS256 JWT signed by
// its private key (GET /app, GET /repos/{o}/{r}/installation, POST
// /app/installations/{id}/access_tokens) and acts through installation
// tokens that expire, whose identity is "SLUG[bot]" and which, as on GitHub,
// cannot read GET /user (403 "Resource not accessible by integration").
// Actions' GITHUB_TOKEN is one of those too (AddInstallationToken).
//
// GitHub API docs: https://docs.github.com/apps/creating-github-apps/authenticating-with-a-github-app

// App is a GitHub App registered on the fake.
type App struct {
	ID   int64
	Slug string
	// PublicKey verifies the app's JWTs. Tests generate the key pair at run
	// time; no private key is committed.
	PublicKey *rsa.PublicKey
	// TokenTTL is how long an installation token lives; default an hour,
	// as on GitHub.
	TokenTTL time.Duration
}

// appState is the fake's GitHub App data, guarded by Server.mu.
type appState struct {
	apps          map[int64]*App
	installations map[int64]installation // id -> installation
	nextInstall   int64
	installLogins map[string]bool      // lower(login) -> authenticates by installation tokens only
	expiry        map[string]time.Time // installation token -> when it stops working
	minted        map[int64]int        // app id -> tokens minted
}

type installation struct {
	id    int64
	appID int64
	repo  string // lower(owner/name)
}

// appsLocked returns the app state, creating it. The caller holds s.mu.
func (s *Server) appsLocked() *appState {
	if s.apps == nil {
		s.apps = &appState{
			apps: map[int64]*App{}, installations: map[int64]installation{}, nextInstall: 40_000_000,
			installLogins: map[string]bool{}, expiry: map[string]time.Time{}, minted: map[int64]int{},
		}
	}
	return s.apps
}

// AddApp registers a GitHub App.
func (s *Server) AddApp(a App) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.TokenTTL <= 0 {
		a.TokenTTL = time.Hour
	}
	st := s.appsLocked()
	st.apps[a.ID] = &a
	login := a.Slug + "[bot]"
	s.userFor(login)
	st.installLogins[strings.ToLower(login)] = true
}

// InstallApp installs app appID on owner/repo and returns the installation id.
func (s *Server) InstallApp(appID int64, owner, repo string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.appsLocked()
	st.nextInstall++
	st.installations[st.nextInstall] = installation{id: st.nextInstall, appID: appID, repo: strings.ToLower(owner + "/" + repo)}
	return st.nextInstall
}

// AddInstallationToken registers a token that acts as login but, like an
// installation token (Actions' GITHUB_TOKEN), cannot read GET /user.
func (s *Server) AddInstallationToken(login, token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = s.userFor(login).login
	s.appsLocked().installLogins[strings.ToLower(login)] = true
}

// InstallationTokensMinted is how many installation tokens app appID minted.
func (s *Server) InstallationTokensMinted(appID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appsLocked().minted[appID]
}

// installationUser answers GET /user for an installation token's identity
// with 403, as GitHub does; nil for any other login.
func (s *Server) installationUser(login string) *reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.apps == nil || !s.apps.installLogins[strings.ToLower(login)] {
		return nil
	}
	return errorReply(http.StatusForbidden, "Resource not accessible by integration")
}

// tokenExpiredLocked reports whether tok is an installation token past its
// expiry. The caller holds s.mu.
func (s *Server) tokenExpiredLocked(tok string) bool {
	if s.apps == nil {
		return false
	}
	exp, ok := s.apps.expiry[tok]
	return ok && !s.now().Before(exp)
}

// serveApp answers the endpoints an App calls with its JWT; nil for every
// other path, which authenticates as usual.
func (s *Server) serveApp(r *http.Request, escRel string) *reply {
	segs := strings.Split(escRel, "/")
	var h func(a *App) *reply
	switch {
	case r.Method == http.MethodGet && len(segs) == 1 && segs[0] == "app":
		h = s.getApp
	case r.Method == http.MethodGet && len(segs) == 4 && segs[0] == "repos" && segs[3] == "installation":
		h = func(a *App) *reply { return s.getRepoInstallation(a, segs[1], segs[2]) }
	case r.Method == http.MethodPost && len(segs) == 4 && segs[0] == "app" && segs[1] == "installations" && segs[3] == "access_tokens":
		h = func(a *App) *reply { return s.mintInstallationToken(a, segs[2]) }
	default:
		return nil
	}
	a, rep := s.verifyAppJWT(r)
	if rep != nil {
		return rep
	}
	return h(a)
}

// verifyAppJWT checks the request's JWT as GitHub does: RS256, signed by
// the key of the app its "iss" names, "iat" not in the future, "exp" in the
// future and at most 10 minutes after "iat".
func (s *Server) verifyAppJWT(r *http.Request) (*App, *reply) {
	scheme, raw, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "bearer") || strings.Count(raw, ".") != 2 {
		return nil, errorReply(http.StatusUnauthorized, "A JSON web token could not be decoded")
	}
	var app *App
	unknownApp := false
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		var id int64
		switch v := claims["iss"].(type) {
		case float64:
			id = int64(v)
		case string:
			id, _ = strconv.ParseInt(v, 10, 64)
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.apps != nil {
			app = s.apps.apps[id]
		}
		if app == nil {
			unknownApp = true
			return nil, errors.New("no such app")
		}
		return app.PublicKey, nil
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithTimeFunc(s.now), jwt.WithIssuedAt(), jwt.WithExpirationRequired())
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return nil, errorReply(http.StatusUnauthorized, "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires")
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return nil, errorReply(http.StatusUnauthorized, "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued")
	case unknownApp:
		return nil, errorReply(http.StatusUnauthorized, "Integration not found")
	case err != nil:
		return nil, errorReply(http.StatusUnauthorized, "A JSON web token could not be decoded")
	}
	iat, _ := claims.GetIssuedAt()
	exp, _ := claims.GetExpirationTime()
	if iat == nil || exp.Sub(iat.Time) > 10*time.Minute {
		return nil, errorReply(http.StatusUnauthorized, "'Expiration time' claim ('exp') is too far in the future")
	}
	return app, nil
}

type appJSON struct {
	ID    int64     `json:"id"`
	Slug  string    `json:"slug"`
	Name  string    `json:"name"`
	Owner *userJSON `json:"owner"`
}

// getApp serves GET /app: the app the JWT authenticates.
func (s *Server) getApp(a *App) *reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	return jsonReply(http.StatusOK, appJSON{ID: a.ID, Slug: a.Slug, Name: a.Slug, Owner: s.userJSON("app-owner")})
}

type installationJSON struct {
	ID      int64     `json:"id"`
	AppID   int64     `json:"app_id"`
	AppSlug string    `json:"app_slug"`
	Account *userJSON `json:"account"`
}

// getRepoInstallation serves GET /repos/{owner}/{repo}/installation: 404
// when the app is not installed there.
func (s *Server) getRepoInstallation(a *App, owner, repo string) *reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	want := strings.ToLower(owner + "/" + repo)
	for _, in := range s.apps.installations {
		if in.appID == a.ID && in.repo == want {
			return jsonReply(http.StatusOK, installationJSON{ID: in.id, AppID: a.ID, AppSlug: a.Slug, Account: s.userJSON(owner)})
		}
	}
	return notFound()
}

// statelessToken is an installation token in the format GitHub mints
// since 2026: ghs_APPID_JWT, about 520 characters with two dots (GitHub's
// changelog, "Notice about upcoming new format for GitHub App installation
// tokens"). Its parts are random: no client may read into it.
func statelessToken(appID int64) (string, error) {
	var payload [96]byte
	var sig [256]byte // an RS256 signature's size
	if _, err := rand.Read(payload[:]); err != nil {
		return "", err
	}
	if _, err := rand.Read(sig[:]); err != nil {
		return "", err
	}
	b64 := base64.RawURLEncoding.EncodeToString
	return "ghs_" + strconv.FormatInt(appID, 10) + "_" + b64([]byte(`{"alg":"RS256","typ":"JWT"}`)) + "." + b64(payload[:]) + "." + b64(sig[:]), nil
}

// mintInstallationToken serves POST /app/installations/{id}/access_tokens.
func (s *Server) mintInstallationToken(a *App, rawID string) *reply {
	id, err := strconv.ParseInt(rawID, 10, 64)
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.apps.installations[id]
	if err != nil || !ok || in.appID != a.ID {
		return notFound()
	}
	tok, err := statelessToken(a.ID)
	if err != nil {
		return errorReply(http.StatusInternalServerError, "Server Error")
	}
	s.tokens[tok] = s.userFor(a.Slug + "[bot]").login
	exp := s.now().Add(a.TokenTTL)
	s.apps.expiry[tok] = exp
	s.apps.minted[a.ID]++
	return jsonReply(http.StatusCreated, map[string]any{
		"token": tok, "expires_at": stamp(exp), "repository_selection": "selected",
		"permissions": map[string]string{"contents": "write", "issues": "write", "pull_requests": "write"},
	})
}
