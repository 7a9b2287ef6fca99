package supervise_test

import (
	"testing"

	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/internal/supervise"
	"github.com/ghonce/ghonce/ledger"
)

// checkGone checks that Run named its supervisor and that, Run returned,
// the supervisor and its process group are proven gone.
func checkGone(t *testing.T, sup ledger.Proc) {
	t.Helper()
	if !sup.Complete() {
		t.Fatalf("started was given %+v; want the supervisor's whole identity", sup)
	}
	if st := supervise.Gone(sup); st != procid.Gone {
		t.Fatalf("Gone(%s) = %v after Run returned; want gone", supervise.Describe(sup), st)
	}
}
