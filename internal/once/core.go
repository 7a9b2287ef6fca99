// Package once is the ledger side of doing an effect once, which every
// kind shares, on GitHub or not: the claim of a key (waiting for a live
// holder, taking over from a dead one), the heartbeat that keeps it, the
// wait for what a taken-over attempt may have in flight, the mark that a
// create is about to leave and the record of the end (done.go: forced to
// disk when nothing else can prove it); the look-up of a key an earlier
// version derived another way (formerkey.go); whether a done key's stored
// description differs from this run's (changed.go); the spans and metrics
// of an action (observe.go); an action's identity and payload, and an
// engine's list of kinds (prepare.go); the result, the settlement and the
// outcome handling both engines share (result.go); and the errors an
// attempt that does not end done returns. Package reconcile (GitHub) and
// package offgithub (effects GitHub cannot see) re-export what they
// return under the same names.
package once

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/human"
	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/observe"
	"github.com/ghonce/ghonce/outcome"
)

// Config builds a Core. Ledger is required; New fills in the defaults of
// the others.
type Config struct {
	Ledger ledger.Ledger
	// Owner identifies this process in leases.
	Owner ledger.Owner
	// Lease is how long a claim holds a key unless renewed; Wait, how long
	// a claim waits for a live holder; Settle, the in-flight window of a
	// create sent to GitHub.
	Lease, Wait, Settle time.Duration
	Now                 func() time.Time
	Sleep               func(ctx context.Context, d time.Duration) error
	// Gone reports whether the process p is proven gone.
	Gone    func(p ledger.Proc) bool
	Logf    func(format string, args ...any)
	Metrics *observe.Metrics
	// NoFormerKeys: the ledger holds no entry under a key an earlier
	// version derived (KeyFor looks for none).
	NoFormerKeys bool
}

// Core is the ledger side of an attempt, whatever the effect: the claim,
// with its wait for a live holder and its takeover from a dead one; the
// heartbeat that keeps the lease; the wait for what a taken-over attempt
// may have in flight; the sending mark; and the record of the end. It is
// safe for concurrent use.
type Core struct{ cfg Config }

// New returns a Core for cfg, with the defaults filled in: an Owner that
// is this process (NewOwner), a 30s Wait, a 2m Lease, DefaultSettle, the
// system's clock, procid's proof that a process is gone, and silence. A
// negative Wait or Settle means none.
func New(cfg Config) *Core {
	if cfg.Owner.ID == "" {
		cfg.Owner = NewOwner()
	}
	if cfg.Wait == 0 {
		cfg.Wait = 30 * time.Second
	}
	if cfg.Settle == 0 {
		cfg.Settle = DefaultSettle
	}
	if cfg.Lease == 0 {
		cfg.Lease = 2 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.Gone == nil {
		cfg.Gone = func(p ledger.Proc) bool { return procid.Check(p) == procid.Gone }
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return &Core{cfg: cfg}
}

// Config is the Core's configuration, its defaults filled in.
func (o *Core) Config() Config { return o.cfg }

// DefaultSettle is the default in-flight window of a create (Config.Settle):
// GitHub's 10-second limit on a request, plus 5 seconds for the request to
// reach GitHub and for clocks (the ledger's, not this machine's, dates the
// mark) to disagree.
const DefaultSettle = 15 * time.Second

// NewOwner identifies the running process: with its boot id, PID namespace
// and start time where the system tells them (procid), so that a taker can
// prove it gone.
func NewOwner() ledger.Owner {
	host, _ := os.Hostname()
	var b [6]byte
	_, _ = rand.Read(b[:])
	me := procid.Self()
	return ledger.Owner{ID: fmt.Sprintf("%s/%d/%x", host, os.Getpid(), b), Host: host, PID: os.Getpid(),
		Boot: me.Boot, PIDNS: me.PIDNS, Start: me.Start}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Claim claims p.Key, waiting up to Config.Wait while another live process
// holds it, and taking over at once from a holder proven gone (HolderGone).
func (o *Core) Claim(ctx context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	p.Owner = o.cfg.Owner
	p.Lease = o.cfg.Lease
	start := o.cfg.Now()
	poll := 50 * time.Millisecond
	told := false
	for {
		c, err := o.cfg.Ledger.Claim(ctx, p)
		if err != nil {
			return nil, Unavailable(p.Key, err) // the ledger's error names the key
		}
		if c.State != ledger.ClaimBusy {
			if told {
				o.cfg.Metrics.InFlightWait(o.cfg.Now().Sub(start))
			}
			if c.State == ledger.ClaimAcquired && c.Prior == ledger.Attempting && p.TakeOverFence == 0 {
				o.cfg.Metrics.Takeover() // an expired lease, taken by the ledger itself
			}
			return c, nil
		}
		h := c.Entry.Owner
		if o.HolderGone(h) && p.TakeOverFence != c.Entry.Fence {
			o.cfg.Metrics.Takeover()
			o.cfg.Logf("taking over %s from process %d, which is gone", p.Key, h.PID)
			p.TakeOverFence = c.Entry.Fence
			p.Why = fmt.Sprintf("took over from %s: process gone", h.ID)
			continue
		}
		here := procid.Check(h.Proc()) == procid.Alive
		waited := o.cfg.Now().Sub(start)
		if waited >= o.cfg.Wait {
			if told {
				o.cfg.Metrics.InFlightWait(waited)
			}
			return nil, o.inProgress(ctx, c, here, waited)
		}
		if !told {
			told = true
			o.cfg.Logf("%s is held by another attempt (%s, lease until %s); waiting up to %s for it to finish",
				p.Key, holderName(h, here), c.Entry.LeaseUntil.UTC().Format(time.TimeOnly), human.Duration(o.cfg.Wait))
		}
		if err := o.cfg.Sleep(ctx, min(poll, o.cfg.Wait-waited)); err != nil {
			return nil, err
		}
		// A holder on this machine is polled every second at most; one
		// elsewhere, whose end only the ledger tells, less often: each poll
		// of a repository ledger is a request to GitHub.
		maxPoll := time.Second
		if !here {
			maxPoll = max(time.Second, o.cfg.Lease/24)
		}
		poll = min(poll*2, maxPoll)
	}
}

// inProgress is the error of claim c, which found its entry held by a live lease
// after waiting waited: whose claim, since when (its history says), until
// when, and whether the holder runs here.
func (o *Core) inProgress(ctx context.Context, c *ledger.Claim, here bool, waited time.Duration) error {
	e := c.Entry
	ip := &outcome.InProgressError{Key: e.Key, Holder: e.Owner, Waited: waited, Until: e.LeaseUntil, Here: here}
	if !c.Now.IsZero() {
		ip.Left = max(e.LeaseUntil.Sub(c.Now), 0)
	}
	if hist, err := o.cfg.Ledger.History(ctx, e.Key); err == nil {
		for _, t := range hist {
			if t.Fence == e.Fence { // the claim that took this fence
				ip.Since = t.At
				break
			}
		}
	}
	return ip
}

// holderName names holder h for a log line.
func holderName(h ledger.Owner, here bool) string {
	if here {
		return fmt.Sprintf("process %d of this machine", h.PID)
	}
	if h.Host == "" {
		return fmt.Sprintf("%s, on another machine", h.ID)
	}
	return fmt.Sprintf("%s, process %d on %s, another machine", h.ID, h.PID, h.Host)
}

// HolderGone reports whether the holder h is proven gone: its identity
// (boot id, PID namespace, PID, start time) names a process of this
// machine and namespace that no longer runs. A host name proves nothing
// (containers with host networking share it; so may two machines), nor
// does a PID alone; a holder recorded without the full identity (by an
// older ghonce) is waited for until its lease ends.
func (o *Core) HolderGone(h ledger.Owner) bool {
	return h.PID > 0 && h.ID != o.cfg.Owner.ID && o.cfg.Gone(h.Proc())
}

// Heartbeat renews the lease while an attempt runs. If the lease is lost to
// a newer claim, the attempt's context is cancelled.
func (o *Core) Heartbeat(ctx context.Context, key string, fence int64) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(o.cfg.Lease / 4)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if err := o.cfg.Ledger.Renew(ctx, key, fence, o.cfg.Lease); errors.Is(err, ledger.ErrFenced) {
					o.cfg.Logf("lost the lease on %s to a newer attempt; stopping", key)
					cancel()
					return
				}
			}
		}
	}()
	return ctx, func() { close(done); <-stopped; cancel() }
}

// Renew renews the lease on key, held under fence.
func (o *Core) Renew(ctx context.Context, key string, fence int64) error {
	return o.cfg.Ledger.Renew(ctx, key, fence, o.cfg.Lease)
}

// MarkSending records, before the create leaves, that it is about to:
// a taker waits out what it may have in flight (LetInFlightLand). p names
// the process that runs a guarded command; zero for a request to GitHub.
func (o *Core) MarkSending(ctx context.Context, key string, fence int64, p ledger.Proc) error {
	return o.cfg.Ledger.MarkSending(ctx, ledger.SendingParams{Key: key, Fence: fence, Lease: o.cfg.Lease, Proc: p})
}

// MarkFailed is the error of a sending mark the ledger refused: nothing
// was sent. The entry stays attempting (the ledger could not be written,
// or a newer attempt holds it), so this attempt leaves it as it is.
func (o *Core) MarkFailed(key string, entry *ledger.Entry, err error) error {
	if errors.Is(err, ledger.ErrFenced) {
		return err
	}
	_, _ = o.Finish(key, entry.Fence, ledger.Attempting, "", effect.Artifact{}, err.Error())
	if errors.Is(err, ledger.ErrUnavailable) {
		return Unavailable(key, err)
	}
	return &outcome.UnconfirmedError{Key: key, Err: &outcome.NotSentError{Key: key, Ledger: true, Err: err}, Hint: RerunHint}
}

// LetInFlightLand waits, before looking, until a request to GitHub that
// the attempt claim c took over may have in flight has landed: until
// Config.Settle has passed since its sending mark (on the ledger's clock:
// claimed is when this process read c, on its own monotonic clock). An
// attempt that left no mark sent nothing: no wait. A mark naming a process
// (a guarded command's supervisor) is package offgithub's to wait out.
func (o *Core) LetInFlightLand(ctx context.Context, c *ledger.Claim, claimed time.Time) error {
	s := c.Entry.Sending
	if s.At.IsZero() || o.cfg.Settle <= 0 || c.Now.IsZero() {
		return nil
	}
	age := c.Now.Sub(s.At)
	wait := o.cfg.Settle - age - o.cfg.Now().Sub(claimed)
	if wait <= 0 {
		return nil
	}
	o.cfg.Logf("an earlier attempt on %s sent its create %s ago; GitHub may still be committing it: waiting %s (the in-flight window is %s) before looking",
		c.Entry.Key, human.Duration(age), human.Duration(wait), human.Duration(o.cfg.Settle))
	return o.cfg.Sleep(ctx, wait)
}

// Finish records the end of an attempt. It runs on a context of its own so
// that a cancelled caller still leaves an accurate ledger behind.
func (o *Core) Finish(key string, fence int64, st ledger.Status, outcome string, art effect.Artifact, errMsg string) (*ledger.Entry, error) {
	return o.Record(FinishParams(key, fence, st, outcome, art, errMsg))
}

// ReleasedWhy is the history's reason for an attempt that ended without an
// outcome and answered its caller so ("it may have happened"): the next
// run looks again.
const ReleasedWhy = ledger.ReleasedWhy

// FinishParams is the record of an attempt's end, with the history's reason
// for each status.
func FinishParams(key string, fence int64, st ledger.Status, outcome string, art effect.Artifact, errMsg string) ledger.FinishParams {
	why := map[ledger.Status]string{ledger.Done: outcome, ledger.Failed: "refused: nothing was created", ledger.Attempting: ReleasedWhy}[st]
	return ledger.FinishParams{
		Key: key, Fence: fence, Status: st, Outcome: outcome, Error: errMsg, Why: why,
		Ref: ledger.Ref{Number: art.Number, ID: art.ID, URL: art.URL, SHA: art.SHA, Text: art.Text},
	}
}

// Record writes p, on a context of its own, mapping a done record fenced
// off by a newer attempt to an unconfirmed outcome.
func (o *Core) Record(p ledger.FinishParams) (*ledger.Entry, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	key := p.Key
	ent, err := o.cfg.Ledger.Finish(ctx, p)
	if err != nil {
		if errors.Is(err, ledger.ErrFenced) && p.Status == ledger.Done {
			// A newer attempt took over; it will find this artifact.
			return nil, &outcome.UnconfirmedError{Key: key, Err: err, Hint: "A newer attempt owns this key now and will find what this one made."}
		}
		if p.Status == ledger.Done {
			// The artifact exists on GitHub but the ledger could not say so
			// (a lost database connection, a full disk): the entry is still
			// attempting, and a rerun finds the artifact. That is exit 3,
			// not a plain error: retrying is exactly what settles it. Give
			// the lease up if the ledger still answers, so a long-running
			// caller (the MCP server, a library user) can retry at once
			// instead of waiting out its own lease.
			_, _ = o.cfg.Ledger.Finish(ctx, FinishParams(key, p.Fence, ledger.Attempting, "", effect.Artifact{}, "the ledger could not record "+p.Outcome+": "+err.Error()))
			return nil, &outcome.UnconfirmedError{Key: key, Err: fmt.Errorf("%s on GitHub (%s), but the ledger could not record it: %w", p.Outcome, RefText(p.Ref), err), Hint: RerunHint}
		}
		return nil, err
	}
	return ent, nil
}

// RefText names an artifact for a message.
func RefText(a ledger.Ref) string {
	if n := a.Name(); n != "" {
		return n
	}
	return "no reference"
}

// githubRequestLimit is how long GitHub works on a request before it ends
// it: a create sent may be committed until then.
const githubRequestLimit = 10 * time.Second

// Held is what a claim this run just made still vouches for, on this
// machine's clock.
type Held struct {
	// Marked: until when the in-flight mark the claim wrote with its entry
	// (ledger.ClaimParams.Sending) covers a create sent; zero when it
	// wrote none. The mark is dated when the ledger wrote the claim, after
	// it was sent, and a taker waits Settle from it: a create sent before
	// sent+Settle-10s lands before the taker looks. A second is kept back
	// for a ledger whose clock has whole seconds (GitHub's commit dates).
	Marked time.Time
	// Leased: until when the lease the claim took is surely this run's with
	// half of it to spare, so a check before the create needs no renewal:
	// no one takes a live lease from a process that runs, the heartbeat
	// renews it every quarter, and the mark before the create renews it.
	Leased time.Time
}

// HeldBy is what claim c, sent at sent, vouches for.
func (o *Core) HeldBy(c *ledger.Claim, sent time.Time) Held {
	h := Held{Leased: sent.Add(o.cfg.Lease / 2)}
	cover := o.cfg.Settle - githubRequestLimit - time.Second
	if c.State == ledger.ClaimCreated && !c.Entry.Sending.At.IsZero() && c.Entry.Sending.Proc.IsZero() && cover > 0 {
		h.Marked = sent.Add(cover)
	}
	return h
}

// MarkBeforeSend makes sure that a mark says the create of entry's key is
// about to leave, before it does: a taker waits out its window. The claim h
// is the mark while it was written moments ago. A lease lost meanwhile
// (ErrFenced) means a newer attempt may be creating: stop.
func (o *Core) MarkBeforeSend(ctx context.Context, entry *ledger.Entry, h Held) error {
	if !h.Marked.IsZero() && o.cfg.Now().Before(h.Marked) {
		return nil
	}
	if err := o.MarkSending(ctx, entry.Key, entry.Fence, ledger.Proc{}); err != nil {
		return o.MarkFailed(entry.Key, entry, err)
	}
	return nil
}
