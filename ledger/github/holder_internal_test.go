package github

import (
	"strings"
	"testing"

	"github.com/ghonce/ghonce/ledger"
)

// TestSealedHolder: a holder's process identity is read back only on its
// own machine (boot id) and in its own PID namespace; anywhere else, and
// from anything that is not a sealed identity, it is nothing.
func TestSealedHolder(t *testing.T) {
	p := ledger.Proc{Boot: "6f1c2b1e-0d52-4b4e-9a57-0e8c1d2f3a4b", PIDNS: 4026531836, PID: 4242, Start: 987654}
	s := sealProc(p)
	if s == "" || strings.Contains(s, "4242") || strings.Contains(s, p.Boot) {
		t.Fatalf("sealed %+v as %q", p, s)
	}
	if s2 := sealProc(p); s2 == s {
		t.Error("two seals of one identity are equal: a reader could tell a holder's writes apart from another's by them alone")
	}
	if got := openProc(s, ledger.Proc{Boot: p.Boot, PIDNS: p.PIDNS, PID: 1, Start: 1}); got != p {
		t.Errorf("opened on the same machine and namespace: %+v, want %+v", got, p)
	}
	for name, me := range map[string]ledger.Proc{
		"another machine":   {Boot: "0a0a0a0a-0d52-4b4e-9a57-0e8c1d2f3a4b", PIDNS: p.PIDNS, PID: 1},
		"another namespace": {Boot: p.Boot, PIDNS: p.PIDNS + 1, PID: 1},
		"no identity":       {PID: 1},
	} {
		if got := openProc(s, me); !got.IsZero() {
			t.Errorf("opened on %s: %+v, want nothing", name, got)
		}
	}
	for _, bad := range []string{"", "x", "AAAA", s[:len(s)-2], strings.Repeat("A", 60)} {
		if got := openProc(bad, p); !got.IsZero() {
			t.Errorf("opened %q: %+v, want nothing", bad, got)
		}
	}
	if sealProc(ledger.Proc{PID: 7}) != "" {
		t.Error("an incomplete identity was sealed")
	}
}
