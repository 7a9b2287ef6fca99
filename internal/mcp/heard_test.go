package mcp

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// session is a client session that ends when end is closed.
type session struct{ end chan struct{} }

func (s *session) Wait() error { <-s.end; return nil }

// A session remembers the latest maxHeard keys it was told of, and
// nothing once it ends: a long-lived server's memory does not grow with
// every call it ever answered.
func TestHeardIsBoundedPerSessionAndGoesWithIt(t *testing.T) {
	s := &Server{}
	a, b := &session{end: make(chan struct{})}, &session{end: make(chan struct{})}
	ca, cb := withSession(context.Background(), a), withSession(context.Background(), b)
	for i := range maxHeard + 10 {
		s.tell(ca, fmt.Sprintf("gk1_a%d", i))
	}
	s.tell(cb, "gk1_b")
	s.tell(cb, "gk1_b") // told again: still one key

	ha, hb := s.heard(ca), s.heard(cb)
	if ha("gk1_a0") || ha("gk1_a9") {
		t.Error("session a still remembers its oldest keys beyond the bound")
	}
	if !ha("gk1_a10") || !ha(fmt.Sprintf("gk1_a%d", maxHeard+9)) {
		t.Error("session a forgot keys within the bound")
	}
	if ha("gk1_b") || !hb("gk1_b") {
		t.Error("sessions share what they heard")
	}
	s.toldMu.Lock()
	na, nb := len(s.told[a].set), len(s.told[a].order)
	s.toldMu.Unlock()
	if na != maxHeard || nb != maxHeard {
		t.Errorf("session a holds %d keys (%d in order), want %d", na, nb, maxHeard)
	}

	close(a.end)
	close(b.end)
	s.forgetting.Wait()
	if ha("gk1_a10") || hb("gk1_b") {
		t.Error("an ended session's keys are still remembered")
	}
	s.toldMu.Lock()
	n := len(s.told)
	s.toldMu.Unlock()
	if n != 0 {
		t.Errorf("%d ended sessions still held", n)
	}
}

// The design page's figure is maxHeard.
func TestSameActPageGivesTheHeardBound(t *testing.T) {
	b, err := os.ReadFile("../../docs/design/same-act.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("remembers the latest %d keys per client session", maxHeard); !strings.Contains(strings.Join(strings.Fields(string(b)), " "), want) {
		t.Errorf("docs/design/same-act.md does not say %q", want)
	}
}
