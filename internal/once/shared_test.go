package once_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/ledger"
)

// keys is a ledger that answers Get from a set of keys, or fails every read
// with err.
type keys struct {
	ledger.Ledger
	held map[string]bool
	err  error
}

func (l keys) Get(_ context.Context, key string) (*ledger.Entry, error) {
	switch {
	case l.err != nil:
		return nil, l.err
	case l.held[key]:
		return &ledger.Entry{Key: key}, nil
	}
	return nil, ledger.ErrNotFound
}

// Work an older ghonce recorded under a former key keeps that key; work no
// ledger has seen gets the new key; a ledger that cannot be read is an
// error, since guessing the new key could do the work twice.
func TestKeyForKeepsAFormerKeyTheLedgerHolds(t *testing.T) {
	ctx := context.Background()
	former := []string{"gk1_old", "gk1_older"}
	for _, tc := range []struct {
		name string
		l    keys
		want string
	}{
		{"held under the second former key", keys{held: map[string]bool{"gk1_older": true}}, "gk1_older"},
		{"held under none", keys{held: map[string]bool{}}, "gk1_new"},
	} {
		got, err := once.New(once.Config{Ledger: tc.l}).KeyFor(ctx, "gk1_new", former)
		if err != nil || got != tc.want {
			t.Errorf("%s: KeyFor = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	down := errors.New("disk I/O error")
	got, err := once.New(once.Config{Ledger: keys{err: down}}).KeyFor(ctx, "gk1_new", former)
	if !errors.Is(err, down) || got != "" {
		t.Errorf("a ledger that cannot be read: KeyFor = %q, %v; want the read's error and no key", got, err)
	}
	if got, err := once.New(once.Config{Ledger: keys{err: down}}).KeyFor(ctx, "gk1_new", nil); err != nil || got != "gk1_new" {
		t.Errorf("no former keys: KeyFor = %q, %v; want the key, with no read", got, err)
	}
}

// A done key's stored description is compared with this run's by hash;
// the fields named are those that differ or that one of the two lacks.
func TestChangedNamesTheFieldsThatDiffer(t *testing.T) {
	stored := &ledger.Entry{PayloadHash: "h1", Payload: []byte(`{"title":"Fix","head":"a","draft":true}`)}
	if changed, fields := once.Changed(stored, []byte(`{"title":"Other"}`), "h1"); changed || fields != nil {
		t.Errorf("same hash: Changed = %v, %v; want unchanged", changed, fields)
	}
	changed, fields := once.Changed(stored, []byte(`{"title":"Fix","head":"b","body":"x"}`), "h2")
	if !changed || !slices.Equal(fields, []string{"body", "draft", "head"}) {
		t.Errorf("Changed = %v, %v; want changed in body, draft and head", changed, fields)
	}
	if got := once.Differ(fields); got != "body, draft and head differ" {
		t.Errorf("Differ = %q", got)
	}
	changed, fields = once.Changed(stored, []byte("not json"), "h3")
	if !changed || fields != nil {
		t.Errorf("unreadable payload: Changed = %v, %v; want changed, no fields named", changed, fields)
	}
	if got := once.Differ(nil); got != "description differs" {
		t.Errorf("Differ(nil) = %q", got)
	}
}
