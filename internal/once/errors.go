package once

import (
	"errors"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
)

// RerunHint is the next step of an attempt whose outcome is unknown.
const RerunHint = "The entry stays \"attempting\": rerun the same command, or run `ghonce reconcile`, to settle it against GitHub before anything is created again."

// Unavailable turns a ledger error of an attempt that sent nothing into
// exit 3 with words that say so, when the ledger is unavailable; other
// errors pass unchanged.
func Unavailable(key string, err error) error {
	if !errors.Is(err, ledger.ErrUnavailable) {
		return err
	}
	return &outcome.UnconfirmedError{Key: key, Err: &outcome.LedgerUnavailableError{Key: key, Err: err}}
}
