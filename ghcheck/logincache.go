package ghcheck

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// LoginCache keeps the token's login between processes, so that a run
// spends no request on GET /user when an earlier run already asked. ghonce
// keeps it in the ledger's meta table (internal/cli); ghcheck does not
// import the ledger.
//
// Keys are fingerprints (TokenFingerprint): never the token, and not
// reversible to it. Implementations must be safe for concurrent use;
// errors are theirs to swallow: a cache that cannot answer is a miss.
type LoginCache interface {
	// GetLogin returns the login stored under fingerprint, ok false when
	// none is.
	GetLogin(ctx context.Context, fingerprint string) (login string, ok bool)
	// PutLogin stores login under fingerprint.
	PutLogin(ctx context.Context, fingerprint, login string)
	// ForgetLogin removes what is stored under fingerprint (after GitHub
	// answered 401 to the token).
	ForgetLogin(ctx context.Context, fingerprint string)
}

// fingerprintDomain separates ghonce's token fingerprints from any other
// hash of a token.
const fingerprintDomain = "ghonce.login-cache.v1"

// TokenFingerprint names a token at an API root without revealing it: hex
// of SHA-256 over a domain string, the API root and the token, cut to 32
// characters (128 bits). A rotated token, or the same token against
// another host (GitHub Enterprise), has another fingerprint, so a cached
// login never crosses tokens or hosts.
func TokenFingerprint(baseURL, token string) string {
	h := sha256.New()
	for _, s := range []string{fingerprintDomain, strings.TrimRight(baseURL, "/"), token} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// UseLoginCache sets the client's LoginCache after New, for a caller that
// validates its options (New makes no request) before it opens the store
// the cache lives in. Call it before the client's first request.
func (c *Client) UseLoginCache(lc LoginCache) { c.opts.LoginCache = lc }

// cachedLogin returns the login a LoginCache holds for this client's
// token, "" when there is none, no cache, or no static token (an App's
// minted tokens rotate; their identity comes from GET /app).
func (c *Client) cachedLogin(ctx context.Context) string {
	if c.opts.LoginCache == nil || c.fingerprint == "" {
		return ""
	}
	if l, ok := c.opts.LoginCache.GetLogin(ctx, c.fingerprint); ok && l != "" {
		return l
	}
	return ""
}

func (c *Client) storeLogin(ctx context.Context, login string) {
	if c.opts.LoginCache != nil && c.fingerprint != "" {
		c.opts.LoginCache.PutLogin(ctx, c.fingerprint, login)
	}
}

// forgetLogin drops the cached login: GitHub answered 401, so the token
// is no longer what it was (revoked or expired). It does not touch the
// in-memory login (Login may hold its lock while the 401 arrives): within
// one process the token is the same one.
func (c *Client) forgetLogin(ctx context.Context) {
	if c.opts.LoginCache != nil && c.fingerprint != "" {
		c.opts.LoginCache.ForgetLogin(ctx, c.fingerprint)
	}
}
