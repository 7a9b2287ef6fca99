package ledgertest

// Ledger metadata.

import (
	"errors"

	"github.com/ghonce/ghonce/ledger"
)

func testMeta(h *harness) {
	if _, err := h.l.GetMeta(h.ctx, "ledgertest-meta"); !errors.Is(err, ledger.ErrNotFound) {
		h.t.Fatalf("GetMeta of an unset name: err = %v, want ErrNotFound", err)
	}
	if wrote, err := h.l.PutMeta(h.ctx, "ledgertest-meta", "init", true); err != nil || !wrote {
		h.t.Fatalf("PutMeta ifAbsent on an unset name = %v, %v; want true, nil", wrote, err)
	}
	if wrote, err := h.l.PutMeta(h.ctx, "ledgertest-meta", "action", true); err != nil || wrote {
		h.t.Fatalf("PutMeta ifAbsent on a set name = %v, %v; want false, nil", wrote, err)
	}
	if v, err := h.l.GetMeta(h.ctx, "ledgertest-meta"); err != nil || v != "init" {
		h.t.Fatalf("GetMeta after a refused ifAbsent = %q, %v; want the first value", v, err)
	}
	if wrote, err := h.l.PutMeta(h.ctx, "ledgertest-meta", "action", false); err != nil || !wrote {
		h.t.Fatalf("PutMeta = %v, %v; want true, nil", wrote, err)
	}
	if v, err := h.l.GetMeta(h.ctx, "ledgertest-meta"); err != nil || v != "action" {
		h.t.Fatalf("GetMeta after a replace = %q, %v; want action", v, err)
	}
	if _, err := h.l.PutMeta(h.ctx, "", "x", false); err == nil {
		h.t.Error("PutMeta with an empty name succeeded")
	}
	// Meta values live beside entries, not among them.
	if es, err := h.l.List(h.ctx, ledger.ListParams{}); err != nil || len(es) != 0 {
		h.t.Errorf("List after PutMeta = %d entries, %v; want none", len(es), err)
	}
}
