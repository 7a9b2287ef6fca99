//go:build !linux

package supervise_test

import (
	"testing"

	"github.com/ghonce/ghonce/ledger"
)

// checkGone: without a supervisor there is nothing to name or prove gone.
func checkGone(*testing.T, ledger.Proc) {}
