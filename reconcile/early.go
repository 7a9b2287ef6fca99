package reconcile

import (
	"context"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ledger"
)

// early is a look-up started beside the claim, on a ledger where every run
// asks GitHub anyway (Config.DoneNeedsProof: the repository ledger). Its
// answer serves two claims:
//
//   - a done claim, when it found the artifact: that is the proof the
//     claim needs (an artifact of ours carrying the key), and a replay
//     spends no round trip after reading the claim. Anything else is asked
//     again after the claim was read (proveDone): the artifact may have
//     landed just after this look-up read.
//   - a claim that created the entry, when the claim took less than
//     earlyLookFor: the look-up a created entry would make, made from the
//     same description. It may have read before the claim's write, and what
//     it missed could only be made by an attempt whose claim existed after
//     this look-up began and was gone when this claim was written: ghonce
//     removes a claim only when it is done and older than prune's cut, never
//     less than MinPruneAge, far longer than earlyLookFor.
//
// Every other claim looks again, after it is held.
type early struct {
	started time.Time // this machine's clock
	done    chan struct{}
	spec    Spec
	res     effect.Result
}

// earlyLookFor bounds how long after an early look-up began its claim may
// be written and still use its answer for a created entry.
const earlyLookFor = 10 * time.Second

// MinPruneAge is the youngest done claim a prune of the repository ledger
// removes: a first create's early look-up relies on no claim living and
// being removed while its own claim is written (early).
const MinPruneAge = time.Minute

// lookEarly starts the look-up for a's key beside its claim, or returns nil
// where it would not serve (another ledger).
func (e *Engine) lookEarly(ctx context.Context, a Action, key string) *early {
	if !e.cfg.DoneNeedsProof || e.cfg.GitHub == nil {
		return nil
	}
	env := e.env(a.repo, "")
	env.NeverAttempted = !e.cfg.LedgerNew // as dateEnv sets it for a created entry
	x := &early{started: e.cfg.Now(), done: make(chan struct{})}
	// Who we are decides what counts as ours, and look checks it first:
	// learn it now too, for a kind whose look-up does not ask (a branch).
	go func() { _, _ = e.cfg.GitHub.Login(ctx) }()
	go func() {
		defer close(x.done)
		x.spec, x.res = findChoosing(ctx, env, key, a.Spec, nil)
	}()
	return x
}

// forClaim is x if its answer may serve claim c (see early), else nil.
func (x *early) forClaim(c *ledger.Claim, now time.Time) *early {
	switch {
	case x == nil:
		return nil
	case c.State == ledger.ClaimDone:
		return x
	case c.State == ledger.ClaimCreated && now.Sub(x.started) < earlyLookFor:
		return x
	}
	return nil
}

// found waits for x and returns what it found, if it found it.
func (x *early) found() (effect.Artifact, bool) {
	if x == nil {
		return effect.Artifact{}, false
	}
	<-x.done
	return x.res.Artifact, x.res.State == effect.Found
}

// answer waits for x and returns its completed description and result.
func (x *early) answer() (Spec, effect.Result) {
	<-x.done
	return x.spec, x.res
}
