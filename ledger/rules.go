package ledger

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// The rules of the contract that do not depend on how an entry is stored,
// written once so that every backend (and the test model) applies the same
// ones with the same words.

// Validate checks the arguments of a claim before it touches the store.
func (p ClaimParams) Validate() error {
	switch {
	case p.Key == "":
		return errors.New("claim: key is empty")
	case p.Owner.ID == "":
		return fmt.Errorf("claim %s: owner ID is empty", p.Key)
	case p.Lease <= 0 || p.Lease > MaxLease:
		return fmt.Errorf("claim %s: lease %s is not between 0 and %s", p.Key, p.Lease, MaxLease)
	}
	return nil
}

// Settled returns the claim for an entry that cannot be taken (done, or
// held by a live lease that takeOver does not name), or nil if it can: it
// is failed, or attempting with a dead or released lease, or takeOver names
// its fence. (Fences start at 1, so a zero takeOver names none.)
func Settled(e *Entry, now time.Time, takeOver int64) *Claim {
	switch {
	case e.Status == Done:
		return &Claim{State: ClaimDone, Entry: e, Prior: e.Status}
	case e.LeaseLive(now) && takeOver != e.Fence:
		return &Claim{State: ClaimBusy, Entry: e, Prior: e.Status}
	}
	return nil
}

// Validate checks the arguments of a finish.
func (p FinishParams) Validate() error {
	if p.Key == "" {
		return errors.New("finish: key is empty")
	}
	if !p.Status.Valid() {
		return fmt.Errorf("finish %s: status %q is not attempting, done or failed", p.Key, p.Status)
	}
	return nil
}

// UpdatedAt is the UpdatedAt a finish at now leaves: p.Since for a release
// that keeps the entry's age, else now.
func (p FinishParams) UpdatedAt(now time.Time) time.Time {
	if p.Status == Attempting && !p.Since.IsZero() && p.Since.Before(now) {
		return p.Since
	}
	return now
}

// Holds returns ErrFenced unless e is attempting under exactly fence: the
// check that Finish, Renew and SetPayload make before they write for the
// attempt that claimed e.
func Holds(e *Entry, fence int64) error {
	if e.Status != Attempting || e.Fence != fence {
		return ErrFenced
	}
	return nil
}

// Allows returns ErrFenced unless p may replace e's payload: e is held
// under p.Fence, or, with p.Done, e is done and was recorded under p.Fence.
func (p PayloadParams) Allows(e *Entry) error {
	if !p.Done {
		return Holds(e, p.Fence)
	}
	if e.Status != Done || e.Fence != p.Fence {
		return ErrFenced
	}
	return nil
}

// Validate checks the arguments of a payload replacement.
func (p PayloadParams) Validate() error {
	if p.Key == "" {
		return errors.New("set payload: key is empty")
	}
	return nil
}

// ValidateRenew checks the arguments of a renewal.
func ValidateRenew(key string, lease time.Duration) error {
	if key == "" {
		return errors.New("renew: key is empty")
	}
	if lease <= 0 || lease > MaxLease {
		return fmt.Errorf("renew %s: lease %s is not between 0 and %s", key, lease, MaxLease)
	}
	return nil
}

// Validate checks the arguments of a sending mark.
func (p SendingParams) Validate() error {
	return ValidateRenew(p.Key, p.Lease)
}

// Validate checks the arguments of a person's decision.
func (p ResolveParams) Validate() error {
	switch {
	case p.Key == "":
		return errors.New("resolve: key is empty")
	case p.Status != Done && p.Status != Failed:
		return fmt.Errorf("resolve %s: status %q is not done or failed", p.Key, p.Status)
	case strings.TrimSpace(p.Who) == "":
		return fmt.Errorf("resolve %s: who is empty; say who decided", p.Key)
	}
	return nil
}

// Apply decides a person's decision about e at now: ErrBusy while a live
// lease holds it (unless Force sends it to Failed), ErrDone for a done entry sent back to failed without
// Force; otherwise the ref the entry keeps. Done keeps what p.Ref leaves
// zero; failed points at nothing.
func (p ResolveParams) Apply(e *Entry, now time.Time) (Ref, error) {
	if e.LeaseLive(now) && !(p.Force && p.Status == Failed) {
		return Ref{}, ErrBusy
	}
	if e.Status == Done && p.Status == Failed && !p.Force {
		return Ref{}, ErrDone
	}
	if p.Status == Failed {
		return Ref{}, nil
	}
	return p.Ref.Over(e.Ref), nil
}

// ValidateMetaName checks the name of a meta value.
func ValidateMetaName(name string) error {
	if name == "" {
		return errors.New("put meta: name is empty")
	}
	return nil
}
