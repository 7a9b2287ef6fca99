package reconcile

import (
	"context"
	"strings"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/taskkey"
)

// withoutMarker is body less the tags ghonce puts first.
func withoutMarker(key, body string) string { return taskkey.WithoutMarker(key, body) }

// foundEntry is entry as the artifact r found describes it: when the
// ledger's description of what made it is this run's own (the entry was
// just created, as after a lost ledger) or an earlier attempt's, the
// artifact's own title, body and head are the truth to compare this run's
// with. The description found is recorded, so a later run with the ledger
// kept compares with it too; with OnChangeUpdate, update then records
// this run's. It returns entry unchanged when the artifact shows none.
func (e *Engine) foundEntry(ctx context.Context, a Action, key string, entry *ledger.Entry, r *outcome.Result) *ledger.Entry {
	af, ok := a.Spec.(AsFounder)
	if !ok || r.FoundArtifact == nil {
		return entry
	}
	owner, _, _ := strings.Cut(a.Repo, "/")
	spec, ok := af.AsFound(key, owner, *r.FoundArtifact)
	if !ok {
		return entry
	}
	payload, hash, err := encodeSpec(spec)
	if err != nil {
		return entry
	}
	fe := *entry
	if hash == entry.PayloadHash {
		if len(entry.Payload) > 0 {
			return entry
		}
		// A ledger that keeps only the hash (a repository ledger's claim,
		// read on another machine): the artifact's description is the one
		// the hash names, and the text this run's is compared with.
		fe.Payload = payload
		return &fe
	}
	fe.Payload, fe.PayloadHash = payload, hash
	if a.OnChange != OnChangeUpdate {
		// Best effort: the result says what differs either way.
		_ = e.cfg.Ledger.SetPayload(ctx, ledger.PayloadParams{Key: key, Fence: entry.Fence, Payload: payload, PayloadHash: hash,
			Why: "recorded the description of the artifact found on GitHub", Done: true})
	}
	return &fe
}
