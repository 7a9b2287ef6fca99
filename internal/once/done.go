package once

import (
	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ledger"
)

// RecordDone records art as done, with outcome. verifiable says whether a
// rerun can find the artifact again by looking (every GitHub kind, and a
// guarded command with --check): the ledger may then return before the
// record is forced to disk, since losing it to a crash of the machine
// leaves the entry attempting, and the next run looks, finds and records
// it as found, never creating it twice. A guarded command without --check
// cannot be looked up, so its done record stays forced: a lost one would
// stop the next run for a person (exit 3) or, with --on-unconfirmed retry,
// run the command again.
func (o *Core) RecordDone(key string, fence int64, outcome string, art effect.Artifact, verifiable bool) (*ledger.Entry, error) {
	p := FinishParams(key, fence, ledger.Done, outcome, art, "")
	p.Verifiable = verifiable
	return o.Record(p)
}
