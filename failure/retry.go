package failure

import (
	"errors"

	"github.com/ghonce/ghonce/reconcile"
)

// Retryable says whether running the same action again can succeed where
// err failed: the engine adapters (adapters/temporal, adapters/dbos) hand
// it to their engine's retry policy. It may have happened (unconfirmed),
// another attempt holds the key (in progress), and errors of no known kind
// are retried: the key makes a retry harmless. Bad input, credentials, a
// refusal, a conflict, a broken ledger, a description that changed under
// OnChange "fail" and one the caller must judge (same_or_another) are
// final: a retry gets the same answer.
func Retryable(err error) bool {
	if err == nil {
		return false
	}
	var changed *reconcile.ChangedError
	if errors.As(err, &changed) {
		return false
	}
	switch Describe(err, "", nil).Error.Kind {
	case Usage, Credentials, Refused, Conflict, Ledger, SameOrAnother:
		return false
	}
	return true
}
