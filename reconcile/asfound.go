package reconcile

import (
	"context"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/taskkey"
)

// asFounder is a Spec whose artifact, found on GitHub, shows its own
// description: asFound returns the Spec that would describe the artifact
// as it is (this Spec's other fields kept), or false when the artifact
// read carries none. It lets a run whose ledger has no description of what
// made the artifact (a lost ledger: every fresh runner) compare with the
// artifact itself.
type asFounder interface {
	asFound(key, repoOwner string, art effect.Artifact) (Spec, bool)
}

// withoutMarker is body less the marker line ghonce puts first.
func withoutMarker(key, body string) string {
	if rest, ok := strings.CutPrefix(body, taskkey.Marker(key)+"\n"); ok {
		return rest
	}
	return strings.Replace(body, taskkey.Marker(key), "", 1)
}

func (p PR) asFound(key, repoOwner string, art effect.Artifact) (Spec, bool) {
	if art.Title == "" && art.Head == "" {
		return nil, false
	}
	f := p
	f.Title, f.Body = art.Title, withoutMarker(key, art.Body)
	// Head as this run spells it when it names the same branch: a bare
	// branch is the base repository's.
	if owner, branch, ok := strings.Cut(art.Head, ":"); ok {
		same := strings.EqualFold(art.Head, p.Head) || !strings.Contains(p.Head, ":") && branch == p.Head && strings.EqualFold(owner, repoOwner)
		if !same {
			f.Head = art.Head
		}
	}
	return f, true
}

func (i Issue) asFound(key, _ string, art effect.Artifact) (Spec, bool) {
	if art.Title == "" {
		return nil, false
	}
	f := i
	f.Title, f.Body = art.Title, withoutMarker(key, art.Body)
	return f, true
}

func (c Comment) asFound(key, _ string, art effect.Artifact) (Spec, bool) {
	if art.Body == "" {
		return nil, false
	}
	f := c
	f.Body = withoutMarker(key, art.Body)
	return f, true
}

// foundEntry is entry as the artifact r found describes it: when the
// ledger's description of what made it is this run's own (the entry was
// just created, as after a lost ledger) or an earlier attempt's, the
// artifact's own title, body and head are the truth to compare this run's
// with. The description found is recorded, so a later run with the ledger
// kept compares with it too; with OnChangeUpdate, update then records
// this run's. It returns entry unchanged when the artifact shows none.
func (e *Engine) foundEntry(ctx context.Context, a Action, key string, entry *ledger.Entry, r *Result) *ledger.Entry {
	af, ok := a.Spec.(asFounder)
	if !ok || r.found == nil {
		return entry
	}
	owner, _, _ := strings.Cut(a.Repo, "/")
	spec, ok := af.asFound(key, owner, *r.found)
	if !ok {
		return entry
	}
	payload, hash, err := encodeSpec(spec)
	if err != nil || hash == entry.PayloadHash {
		return entry
	}
	fe := *entry
	fe.Payload, fe.PayloadHash = payload, hash
	if a.OnChange != OnChangeUpdate {
		// Best effort: the result says what differs either way.
		_ = e.cfg.Ledger.SetPayload(ctx, ledger.PayloadParams{Key: key, Fence: entry.Fence, Payload: payload, PayloadHash: hash,
			Why: "recorded the description of the artifact found on GitHub", Done: true})
	}
	return &fe
}
