package failure

import (
	"errors"
	"fmt"
	"testing"

	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// What the engine adapters retry: what may have happened, a key another
// attempt holds, and what has no known kind; never what a retry answers
// the same way.
func TestRetryable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{&outcome.UnconfirmedError{Key: "gk1_x", Err: errors.New("connection reset")}, true},
		{fmt.Errorf("open pr: %w", &outcome.InProgressError{Key: "gk1_x"}), true},
		{errors.New("something else"), true},
		{&reconcile.InvalidError{Err: errors.New("title is empty")}, false},
		{&outcome.ConflictError{Key: "gk1_x", Err: errors.New("branch taken")}, false},
		{&reconcile.ChangedError{Key: "gk1_x", Changed: []string{"title"}, Result: &outcome.Result{Kind: "pr", Number: 1}}, false},
		{&LedgerError{Err: errors.New("not a ledger")}, false},
		{Usagef("bad flag"), false},
	} {
		if got := Retryable(tc.err); got != tc.want {
			t.Errorf("Retryable(%v) = %v; want %v", tc.err, got, tc.want)
		}
	}
}
