package reconcile

import (
	"context"
	"errors"

	"github.com/ghonce/ghonce/ledger"
)

// keyFor is the key Do acts under: p.Key(), unless the
// task or step was not in NFC and the ledger already holds an entry under
// a key the id derived before ids were normalised (taskkey.LegacyKeys).
// Then that entry keeps its key: a rerun of work recorded (done, or left
// attempting) before the upgrade settles that entry and its tags on
// GitHub instead of starting a second one. A ledger read that fails is
// an error: guessing the new key could duplicate the work.
func (e *Engine) keyFor(ctx context.Context, p *Prepared) (string, error) {
	if e.cfg.NoFormerKeys {
		return p.key, nil
	}
	for _, k := range p.legacy {
		_, err := e.cfg.Ledger.Get(ctx, k)
		switch {
		case err == nil:
			return k, nil
		case !errors.Is(err, ledger.ErrNotFound):
			return "", err
		}
	}
	return p.key, nil
}
