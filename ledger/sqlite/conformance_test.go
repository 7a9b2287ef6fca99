package sqlite

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/ledgertest"
)

func TestConformance(t *testing.T) {
	ledgertest.Run(t, func(t *testing.T, now func() time.Time) ledger.Ledger {
		l, err := Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), Options{Now: now})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return l
	})
}
