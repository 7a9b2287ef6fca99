package once

import (
	"context"
	"errors"

	"github.com/ghonce/ghonce/ledger"
)

// KeyFor is the key an attempt acts under: key, unless the ledger already
// holds an entry under one of former, the keys the same work was recorded
// under before (a task or step not in NFC, whose key an older ghonce
// derived before ids were normalised: taskkey.LegacyKeys). Then that entry
// keeps its key: a rerun of work recorded (done, or left attempting)
// before the upgrade settles that entry instead of starting a second one.
// A ledger read that fails is an error: guessing the new key could
// duplicate the work.
func (o *Core) KeyFor(ctx context.Context, key string, former []string) (string, error) {
	if o.cfg.NoFormerKeys {
		return key, nil
	}
	for _, k := range former {
		_, err := o.cfg.Ledger.Get(ctx, k)
		switch {
		case err == nil:
			return k, nil
		case !errors.Is(err, ledger.ErrNotFound):
			return "", err
		}
	}
	return key, nil
}
