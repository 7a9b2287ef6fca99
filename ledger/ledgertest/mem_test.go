package ledgertest

import (
	"context"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

// TestSuiteOnMemory runs the suite against memLedger, a model of the
// contract with no storage at all, to show that the suite asks for the
// contract and nothing SQL-shaped.
func TestSuiteOnMemory(t *testing.T) {
	Run(t, func(t *testing.T, now func() time.Time) ledger.Ledger {
		return &memLedger{now: now, entries: map[string]*ledger.Entry{}, history: map[string][]ledger.Transition{}}
	})
}

func TestClock(t *testing.T) {
	start := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewClock(start)
	if !c.Now().Equal(start) {
		t.Fatalf("Now = %v, want %v", c.Now(), start)
	}
	c.Advance(time.Minute)
	c.Advance(-time.Second)
	if want := start.Add(59 * time.Second); !c.Now().Equal(want) {
		t.Errorf("Now = %v, want %v", c.Now(), want)
	}
}

type memLedger struct {
	mu      sync.Mutex
	now     func() time.Time
	entries map[string]*ledger.Entry
	history map[string][]ledger.Transition
	meta    map[string]string
}

func clone(e *ledger.Entry) *ledger.Entry {
	c := *e
	c.Payload = slices.Clone(e.Payload)
	return &c
}

func (m *memLedger) log(e *ledger.Entry, owner string, from ledger.Status, why string, now time.Time) {
	m.history[e.Key] = append(m.history[e.Key], ledger.Transition{Key: e.Key, At: now, Owner: owner, From: from, To: e.Status, Fence: e.Fence, Why: why})
}

func (m *memLedger) Claim(_ context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	e, ok := m.entries[p.Key]
	if !ok {
		e = &ledger.Entry{
			Key: p.Key, Task: p.Task, Step: p.Step, Kind: p.Kind, Repo: p.Repo, Target: p.Target,
			Payload: slices.Clone(p.Payload), PayloadHash: p.PayloadHash, Status: ledger.Attempting,
			Owner: p.Owner, LeaseUntil: now.Add(p.Lease), Fence: 1, Attempts: 1, CreatedAt: now, UpdatedAt: now,
		}
		m.entries[p.Key] = e
		m.log(e, p.Owner.ID, "", p.Why, now)
		return &ledger.Claim{State: ledger.ClaimCreated, Entry: clone(e), Now: now}, nil
	}
	prior, priorUpdated := e.Status, e.UpdatedAt
	switch {
	case e.Status == ledger.Done:
		return &ledger.Claim{State: ledger.ClaimDone, Entry: clone(e), Prior: prior, Now: now}, nil
	case e.LeaseLive(now) && p.TakeOverFence != e.Fence:
		return &ledger.Claim{State: ledger.ClaimBusy, Entry: clone(e), Prior: prior, Now: now}, nil
	}
	e.Status, e.Owner, e.LeaseUntil, e.UpdatedAt = ledger.Attempting, p.Owner, now.Add(p.Lease), now
	e.Fence++
	e.Attempts++
	m.log(e, p.Owner.ID, prior, p.Why, now)
	return &ledger.Claim{State: ledger.ClaimAcquired, Entry: clone(e), Prior: prior, PriorUpdatedAt: priorUpdated, Now: now}, nil
}

func (m *memLedger) Get(_ context.Context, key string) (*ledger.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[key]
	if !ok {
		return nil, ledger.ErrNotFound
	}
	return clone(e), nil
}

func (m *memLedger) List(_ context.Context, p ledger.ListParams) ([]*ledger.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := p.Select(slices.Collect(maps.Values(m.entries)))
	for i, e := range out {
		out[i] = clone(e)
	}
	return out, nil
}

func (m *memLedger) History(_ context.Context, key string) ([]ledger.Transition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.history[key]), nil
}

// held returns the entry under fence, or the error Finish and Renew return.
func (m *memLedger) held(key string, fence int64) (*ledger.Entry, error) {
	e, ok := m.entries[key]
	if !ok {
		return nil, ledger.ErrNotFound
	}
	if err := ledger.Holds(e, fence); err != nil {
		return nil, err
	}
	return e, nil
}

func (m *memLedger) Finish(_ context.Context, p ledger.FinishParams) (*ledger.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := p.Validate(); err != nil {
		return nil, err
	}
	e, err := m.held(p.Key, p.Fence)
	if err != nil {
		return nil, err
	}
	owner := e.Owner.ID
	if p.Status == ledger.Done {
		e.Outcome, e.Ref = p.Outcome, p.Ref
	}
	now := m.now()
	e.Status, e.LastError, e.Owner, e.LeaseUntil, e.UpdatedAt = p.Status, p.Error, ledger.Owner{}, time.Time{}, p.UpdatedAt(now)
	if p.Status != ledger.Attempting {
		e.Sending = ledger.Sending{}
	}
	m.log(e, owner, ledger.Attempting, p.Why, now)
	return clone(e), nil
}

func (m *memLedger) SetPayload(_ context.Context, p ledger.PayloadParams) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[p.Key]
	if !ok {
		return ledger.ErrNotFound
	}
	if err := p.Allows(e); err != nil {
		return err
	}
	e.Payload, e.PayloadHash, e.UpdatedAt = slices.Clone(p.Payload), p.PayloadHash, m.now()
	m.log(e, e.Owner.ID, e.Status, p.Why, e.UpdatedAt)
	return nil
}

func (m *memLedger) Renew(_ context.Context, key string, fence int64, lease time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.held(key, fence)
	if err != nil {
		return err
	}
	e.UpdatedAt = m.now()
	e.LeaseUntil = e.UpdatedAt.Add(lease)
	return nil
}

func (m *memLedger) MarkSending(_ context.Context, p ledger.SendingParams) error {
	if err := p.Validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, err := m.held(p.Key, p.Fence)
	if err != nil {
		return err
	}
	e.UpdatedAt = m.now()
	e.LeaseUntil = e.UpdatedAt.Add(p.Lease)
	e.Sending = ledger.Sending{At: e.UpdatedAt, Proc: p.Proc}
	return nil
}

func (m *memLedger) Resolve(_ context.Context, p ledger.ResolveParams) (*ledger.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.entries[p.Key]
	if !ok {
		return nil, ledger.ErrNotFound
	}
	now := m.now()
	ref, err := p.Apply(e, now)
	if err != nil {
		return nil, err
	}
	from := e.Status
	e.Status, e.Outcome, e.Ref = p.Status, "resolved", ref
	e.Owner, e.LeaseUntil, e.UpdatedAt, e.Sending = ledger.Owner{}, time.Time{}, now, ledger.Sending{}
	m.log(e, "person:"+p.Who, from, p.Note, now)
	return clone(e), nil
}

func (m *memLedger) Close() error { return nil }

func (m *memLedger) Now(context.Context) (time.Time, error) { return m.now(), nil }

func (m *memLedger) GetMeta(_ context.Context, name string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.meta[name]
	if !ok {
		return "", ledger.ErrNotFound
	}
	return v, nil
}

func (m *memLedger) PutMeta(_ context.Context, name, value string, ifAbsent bool) (bool, error) {
	if err := ledger.ValidateMetaName(name); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.meta == nil {
		m.meta = map[string]string{}
	}
	if _, ok := m.meta[name]; ok && ifAbsent {
		return false, nil
	}
	m.meta[name] = value
	return true, nil
}
