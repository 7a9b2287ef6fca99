package reconcile

import (
	"context"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
)

// LoginCache keeps the token's login in the ledger's meta table, under
// "login:" + ghcheck.TokenFingerprint (never the token), so that only the
// first run on a ledger spends GET /user. Pass it as
// ghcheck.Options.LoginCache. A meta value that cannot be read or written
// is a miss: the login is then asked for, as without a cache.
func LoginCache(l ledger.Ledger) ghcheck.LoginCache { return metaLogins{l} }

type metaLogins struct{ l ledger.Ledger }

func loginMeta(fp string) string { return "login:" + fp }

func (m metaLogins) GetLogin(ctx context.Context, fp string) (string, bool) {
	v, err := m.l.GetMeta(ctx, loginMeta(fp))
	if err != nil || v == "" { // ledger.ErrNotFound, or unreadable: a miss
		return "", false
	}
	return v, true
}

func (m metaLogins) PutLogin(ctx context.Context, fp, login string) {
	_, _ = m.l.PutMeta(ctx, loginMeta(fp), login, false)
}

// ForgetLogin stores an empty value: the ledger has no delete for meta.
func (m metaLogins) ForgetLogin(ctx context.Context, fp string) {
	_, _ = m.l.PutMeta(ctx, loginMeta(fp), "", false)
}
