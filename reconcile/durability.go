package reconcile

import (
	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/ledger"
)

// finishDone records spec's artifact as done. The record is marked
// Verifiable when a rerun can find the artifact again by looking (every
// GitHub kind, and a guarded command with --check): the ledger may then
// return before the record is forced to disk, since losing it to a crash of
// the machine leaves the entry attempting, and the next run looks, finds
// and records it as found, never creating it twice. A guarded command
// without --check cannot be looked up, so its done record stays forced: a
// lost one would stop the next run for a person (exit 3) or, with
// --on-unconfirmed retry, run the command again.
func (e *Engine) finishDone(spec Spec, key string, fence int64, o Outcome, art effect.Artifact) (*ledger.Entry, error) {
	p := once.FinishParams(key, fence, ledger.Done, string(o), art, "")
	p.Verifiable = verifiable(spec)
	return e.core.Record(p)
}

// verifiable reports whether a rerun can establish spec's outcome without
// the ledger's record of it.
func verifiable(spec Spec) bool {
	off, ok := spec.(OffGitHub)
	return !ok || !off.Unverifiable()
}
