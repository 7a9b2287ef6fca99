// Package ledger is ghonce's durable record of intent: before a side effect
// leaves the process, the ledger holds an "attempting" entry for its key; after
// GitHub confirms it, the entry is "done" with a reference to the artifact.
//
// The Ledger interface is the contract every backend keeps (SQLite on one
// machine, Postgres where many machines share work). It assumes nothing of
// SQLite: each method is one atomic step, ownership of a running attempt is a
// lease plus a fencing number, and conflicts are reported as the errors below.
// One conformance suite (ledgertest) runs against every backend.
//
// Durability: Claim is durable before it returns, since the intent must be
// on disk before a request leaves. A Finish marked Verifiable (an outcome a
// rerun can read back from GitHub) may become durable a little later, with
// the next forced write: a crash of the machine may then lose it, and the
// entry reads attempting again, which costs the next run a look-up and
// never a duplicate. So may Renew: a lost renewal only shortens the lease
// of a holder that died with the machine. Every other write is durable
// before it returns.
package ledger

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Status is where an entry stands.
type Status string

const (
	// Attempting: the intent is recorded; whether the action took effect is
	// unknown until it is confirmed against GitHub.
	Attempting Status = "attempting"
	// Done: confirmed, with a reference to the artifact.
	Done Status = "done"
	// Failed: GitHub definitively refused or the action was never sent;
	// nothing was created and a later run may try again.
	Failed Status = "failed"
)

// Valid reports whether s is one of the three statuses.
func (s Status) Valid() bool { return s == Attempting || s == Done || s == Failed }

// Ref points at the artifact an action produced. Which fields are set depends
// on the kind: a PR or issue has Number and URL, a comment ID and URL, a
// branch or file SHA, a guarded command the Text its check printed.
type Ref struct {
	Number int    `json:"number,omitempty"`
	ID     int64  `json:"id,omitempty"`
	URL    string `json:"url,omitempty"`
	SHA    string `json:"sha,omitempty"`
	Text   string `json:"text,omitempty"`
}

// IsZero reports whether r points at nothing.
func (r Ref) IsZero() bool { return r == Ref{} }

// Name is what a message calls the artifact: its URL, else its SHA, else
// #number; empty for a ref that names none (a guarded command's Text is
// what its check printed, not a name).
func (r Ref) Name() string {
	switch {
	case r.URL != "":
		return r.URL
	case r.SHA != "":
		return r.SHA
	case r.Number != 0:
		return "#" + strconv.Itoa(r.Number)
	}
	return ""
}

// Owner identifies one running process that holds (or held) a lease.
type Owner struct {
	ID   string // unique per process run; never reused
	Host string // hostname, for people; it proves nothing about PID
	PID  int
	// Boot, PIDNS and Start complete PID into an identity that names one
	// process across machines and PID namespaces (see Proc). An entry
	// written before they were recorded has them zero: its holder is
	// taken for gone only when its lease ends.
	Boot  string
	PIDNS uint64
	Start uint64
}

// Proc is the process identity of o.
func (o Owner) Proc() Proc { return Proc{Boot: o.Boot, PIDNS: o.PIDNS, PID: o.PID, Start: o.Start} }

// Proc names one process so that "it is gone" can be proven: the kernel's
// boot id (/proc/sys/kernel/random/boot_id: another machine, or a reboot,
// has another), the inode of its PID namespace (/proc/self/ns/pid: a
// container has its own), its PID in that namespace, and its start time in
// clock ticks after boot (/proc/PID/stat, field 22: a PID reused by a later
// process has another). The zero Proc names nothing.
type Proc struct {
	Boot  string
	PIDNS uint64
	PID   int
	Start uint64
}

// IsZero reports whether p names no process.
func (p Proc) IsZero() bool { return p == Proc{} }

// Complete reports whether p has every part of the identity.
func (p Proc) Complete() bool { return p.Boot != "" && p.PIDNS != 0 && p.PID > 0 && p.Start != 0 }

// Sending is the mark an attempt writes, forced, just before its create
// leaves the process (a request to GitHub, or a guarded command started):
// from then on something may be in flight that a look-up cannot see yet.
// It stays through releases and later claims, until the entry is done or
// failed, so every taker knows that a request may still land.
type Sending struct {
	// At is when the mark was written, on the ledger's clock; zero when
	// no create was sent since the entry was last done or failed.
	At time.Time
	// Proc, for a guarded command, is the process that supervises it:
	// the command's processes share its process group (Proc.PID). Zero
	// for a request to GitHub.
	Proc Proc
}

// SendingParams is the input of MarkSending.
type SendingParams struct {
	Key   string
	Fence int64
	// Lease renews the lease to now+Lease in the same write (as Renew).
	Lease time.Duration
	Proc  Proc
}

// Entry is one key's record.
type Entry struct {
	Key    string
	Task   string
	Step   string
	Kind   string
	Repo   string
	Target string

	// Payload is the canonical JSON of the action as last attempted: what was
	// (or may have been) sent to GitHub. PayloadHash is its SHA-256 in hex.
	Payload     []byte
	PayloadHash string

	Status  Status
	Outcome string // how a done entry became done: created, found, resolved
	Ref     Ref

	// Owner and LeaseUntil describe the attempt in progress. A lease whose
	// LeaseUntil has passed, or that was released (zero), is dead.
	Owner      Owner
	LeaseUntil time.Time
	// Fence increases by one on every claim. Writes that finish an attempt
	// name the fence they claimed with, so a runner presumed dead cannot
	// overwrite a newer attempt.
	Fence    int64
	Attempts int

	// Sending says that a create may be in flight (see Sending).
	Sending Sending

	LastError string
	CreatedAt time.Time
	// UpdatedAt is when the entry last moved toward done: its last write,
	// except a release that settled nothing (FinishParams.Since).
	UpdatedAt time.Time
}

// LeaseLive reports whether e is held by a running attempt at time now. A
// lease that ends more than MaxLease after now was written by no ghonce
// (every holder renews to at most now+MaxLease): it holds nothing.
func (e *Entry) LeaseLive(now time.Time) bool {
	return e.Status == Attempting && e.Owner.ID != "" && now.Before(e.LeaseUntil) && e.LeaseUntil.Sub(now) <= MaxLease
}

// MaxLease is the longest lease a claim, a renewal or a sending mark may
// take. A stored lease that ends further away than that (a shared ledger's
// row or claim written by someone else: "until 2099") is dead, so it
// cannot hold a key for good.
const MaxLease = time.Hour

// Transition is one line of an entry's history.
type Transition struct {
	Key   string
	At    time.Time
	Owner string // owner ID, or "person:<who>" for a manual resolution
	From  Status // empty for the first claim
	To    Status
	Fence int64
	Why   string
}

// AnsweredWhy is the Why of a transition that records that a run whose
// description has hash (hex SHA-256) was answered with its key's artifact
// as the same act (reconcile's same-act rule reads it back).
func AnsweredWhy(hash string) string { return answeredPrefix + hash }

const answeredPrefix = "answered as the same act: description "

// ReleasedWhy is the history's reason for an attempt that ended without an
// answer from GitHub and answered its caller so (exit 3): the next run is
// not that caller's retry by itself (the same-act rule reads it back).
const ReleasedWhy = "unconfirmed: released for the next run"

// PublicWhy reports whether why says nothing of the work: a digest
// (AnsweredWhy) or ReleasedWhy. A backend that publishes its history (the
// repository ledger) keeps such a Why, and no other.
func PublicWhy(why string) bool {
	if why == ReleasedWhy {
		return true
	}
	h, ok := strings.CutPrefix(why, answeredPrefix)
	if !ok || len(h) != 64 {
		return false
	}
	for _, c := range h {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// ClaimState says what Claim found and did.
type ClaimState int

const (
	// ClaimCreated: there was no entry; one now exists, attempting, held by
	// the caller with fence 1.
	ClaimCreated ClaimState = iota + 1
	// ClaimAcquired: an attempting entry with a dead lease, or a failed entry,
	// is now attempting and held by the caller with a new fence. The stored
	// payload is left as it was: it may describe what the earlier attempt sent.
	ClaimAcquired
	// ClaimDone: the entry is done; nothing was written.
	ClaimDone
	// ClaimBusy: another owner holds a live lease; nothing was written.
	ClaimBusy
)

func (s ClaimState) String() string {
	switch s {
	case ClaimCreated:
		return "created"
	case ClaimAcquired:
		return "acquired"
	case ClaimDone:
		return "done"
	case ClaimBusy:
		return "busy"
	}
	return "unknown"
}

// ClaimParams is the input of Claim.
type ClaimParams struct {
	Key, Task, Step, Kind, Repo, Target string
	// Payload and PayloadHash are stored only when the entry is created.
	Payload     []byte
	PayloadHash string
	Owner       Owner
	Lease       time.Duration // how long the claim holds before it is presumed dead
	// TakeOverFence, when non-zero, takes a live lease if the entry's fence
	// still equals it: the caller has established that the holder is gone
	// (its process no longer exists on this host).
	TakeOverFence int64
	Why           string // recorded in the history
	// Sending asks that an entry this claim creates carry the sending
	// mark already, written in the same step: Sending becomes {At: the
	// claim's time, Proc zero}, with no transition of its own. It is for a
	// caller about to send a create to GitHub, which may then skip
	// MarkSending while a create sent at once still lands inside the
	// window a taker waits out from the claim's time (reconcile does so
	// within Settle less GitHub's 10 seconds of the claim). A backend
	// whose every write is cheap may ignore it; a claim that acquires an
	// existing entry always does, keeping the earlier attempt's mark, the
	// one a taker must wait out. The caller tells whether the mark was
	// written by the returned entry's Sending.At.
	Sending bool
}

// Claim is the outcome of Claim.
type Claim struct {
	State ClaimState
	// Entry is the entry after the claim. For ClaimBusy and ClaimDone it is
	// the entry as found.
	Entry *Entry
	// Prior is the status before the claim; empty for ClaimCreated.
	Prior Status
	// PriorUpdatedAt is when the entry was last written before an acquiring
	// claim (by the attempt it takes over from); zero otherwise. An attempt
	// that ended or died moments ago may still have requests in flight.
	PriorUpdatedAt time.Time
	// Now is the ledger's clock when the claim was judged (on Postgres the
	// server's): every age of the entry's times (UpdatedAt, LeaseUntil,
	// Sending.At) is computed from it, never from the caller's clock.
	Now time.Time
}

// ListParams filters List. Zero fields match everything.
type ListParams struct {
	Task   string
	Repo   string
	Kind   string
	Status Status
	// UpdatedBefore keeps entries last updated before it (for --stale).
	UpdatedBefore time.Time
	Limit         int
}

// Select returns the entries of all that p keeps, in List's order (created,
// then key) and at most p.Limit of them: List for a backend that holds its
// entries in memory. It returns the entries themselves, not copies.
func (p ListParams) Select(all []*Entry) []*Entry {
	var out []*Entry
	for _, e := range all {
		if (p.Task == "" || e.Task == p.Task) && (p.Repo == "" || e.Repo == p.Repo) && (p.Kind == "" || e.Kind == p.Kind) &&
			(p.Status == "" || e.Status == p.Status) && (p.UpdatedBefore.IsZero() || e.UpdatedAt.Before(p.UpdatedBefore)) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *Entry) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.Key, b.Key)
	})
	if p.Limit > 0 && len(out) > p.Limit {
		out = out[:p.Limit]
	}
	return out
}

// FinishParams ends the attempt held under Fence.
type FinishParams struct {
	Key   string
	Fence int64
	// Status is Done, Failed, or Attempting (release: the outcome is still
	// unknown and the lease is given up so the next run checks at once).
	Status  Status
	Outcome string // for Done: created or found
	Ref     Ref
	Error   string // stored as LastError; cleared by a Done with no Error
	Why     string
	// Verifiable says that the outcome can be established again without
	// this record: a rerun asks GitHub (or the user's --check command)
	// before it creates anything. Losing the record to a crash of the
	// machine then costs a look-up, never a duplicate, so a backend may
	// return before the record is forced to disk: it must still be visible
	// to every reader at once, and it must become durable no later than the
	// next write that is forced (a later Claim). Leave it false where a
	// lost record would make a rerun act again or stop for a person (a
	// guarded command without --check).
	Verifiable bool
	// Unsent, on a release (Status Attempting) of the attempt whose claim
	// created the entry (fence 1), says that it sent nothing: the in-flight
	// mark its claim wrote (ClaimParams.Sending) is cleared, so that a
	// taker does not wait out a window for a create that never left. A
	// backend that writes no mark with a claim has nothing to clear.
	Unsent bool
	// Since, on a release (Status Attempting), is when the entry last
	// moved toward done: the PriorUpdatedAt of the claim this attempt
	// made. An attempt that settled nothing (reconcile without an answer,
	// a look-up GitHub could not make) then leaves the entry's UpdatedAt
	// at Since instead of now, so it keeps its age and `status --stale`
	// still pages for it. Zero, or not before now: now.
	Since time.Time
}

// PayloadParams replaces the stored payload of an attempt held under Fence,
// once GitHub has confirmed that the earlier payload created nothing.
type PayloadParams struct {
	Key         string
	Fence       int64
	Payload     []byte
	PayloadHash string
	Why         string
	// Done replaces instead the payload of a done entry whose fence is
	// still Fence (the attempt that made or found its artifact), after the
	// artifact was edited to match Payload. Its status, ref and lease stay
	// as they are.
	Done bool
}

// ResolveParams is a person settling an entry by hand.
type ResolveParams struct {
	Key    string
	Status Status // Done (it happened) or Failed (retry it)
	// Ref, for Done, adds to the entry's reference: each non-zero field
	// replaces the stored one, each zero field keeps it (Ref.Over), so
	// resolving a done entry again never loses its number or URL.
	Ref  Ref
	Who  string
	Note string
	// Force allows sending a done entry back to Failed. Without it that
	// is refused with ErrDone: a done entry's artifact exists, and a
	// failed entry makes the next run act again. With Status Failed it
	// also clears an entry a live lease holds (a person knows that no
	// attempt runs: a claim someone else wrote, a machine that is gone);
	// the holder's later writes are then fenced off.
	Force bool
}

// Over returns base with each non-zero field of r put over it.
func (r Ref) Over(base Ref) Ref {
	if r.Number != 0 {
		base.Number = r.Number
	}
	if r.ID != 0 {
		base.ID = r.ID
	}
	if r.URL != "" {
		base.URL = r.URL
	}
	if r.SHA != "" {
		base.SHA = r.SHA
	}
	if r.Text != "" {
		base.Text = r.Text
	}
	return base
}

// Ledger is the durable record. Every method is safe for concurrent use by
// many goroutines and many processes sharing the same store, and each is
// atomic: it either happens whole or not at all.
type Ledger interface {
	// Claim records the intent to act on p.Key and takes the lease on it, in
	// one atomic step, durable before it returns (see ClaimState). Exactly
	// one of any number of concurrent claimers of a free key gets
	// ClaimCreated or ClaimAcquired; the others get ClaimBusy.
	Claim(ctx context.Context, p ClaimParams) (*Claim, error)

	// Get returns the entry for key, or ErrNotFound.
	Get(ctx context.Context, key string) (*Entry, error)

	// List returns entries matching p, oldest first.
	List(ctx context.Context, p ListParams) ([]*Entry, error)

	// History returns key's transitions, oldest first (empty, no error, for
	// an unknown key).
	History(ctx context.Context, key string) ([]Transition, error)

	// Finish ends the attempt held under p.Fence and clears its lease. It
	// returns ErrFenced, changing nothing, if the entry is no longer
	// attempting under that fence (another runner took it over), and
	// ErrNotFound for an unknown key.
	Finish(ctx context.Context, p FinishParams) (*Entry, error)

	// SetPayload replaces the stored payload under p.Fence; ErrFenced as
	// Finish. With p.Done it replaces a done entry's payload instead, and
	// returns ErrFenced unless the entry is done with fence p.Fence.
	SetPayload(ctx context.Context, p PayloadParams) error

	// Renew extends the lease held under fence to now+lease; ErrFenced as Finish.
	Renew(ctx context.Context, key string, fence int64, lease time.Duration) error

	// MarkSending records, durable before it returns, that the attempt
	// held under p.Fence is about to send its create: Sending becomes
	// {At: now, Proc: p.Proc}, and the lease is renewed to now+p.Lease. It
	// appends no transition. A Finish to Done or Failed and a Resolve
	// clear the mark; a release and a later Claim keep it. ErrFenced as
	// Finish.
	MarkSending(ctx context.Context, p SendingParams) error

	// Resolve records a person's decision: the entry becomes p.Status with
	// Outcome "resolved" and its lease cleared. To Done, its Ref becomes
	// p.Ref.Over(the stored Ref); to Failed, its Ref is cleared. It returns
	// ErrBusy if a live lease holds the entry (unless p.Force sends it to
	// Failed), ErrNotFound for an unknown key, and ErrDone, changing
	// nothing, for a done entry sent to Failed without p.Force.
	Resolve(ctx context.Context, p ResolveParams) (*Entry, error)

	// GetMeta returns the value stored under name, or ErrNotFound. Meta
	// values are small facts about the store itself (how it was created,
	// a login cached for a token's fingerprint), never secrets.
	GetMeta(ctx context.Context, name string) (string, error)

	// PutMeta stores value under name, replacing an earlier value, durably.
	// With ifAbsent it keeps an existing value and reports whether it wrote
	// (so of concurrent writers exactly one wins); without, it always writes
	// and reports true.
	PutMeta(ctx context.Context, name, value string, ifAbsent bool) (bool, error)

	// Now reads the ledger's clock (on Postgres the server's): the clock
	// every time the ledger stores comes from. An age of a stored time
	// (`status --stale`, a table's "updated 5m ago") is computed from it,
	// never from the caller's clock.
	Now(ctx context.Context) (time.Time, error)

	// Close releases the store's resources.
	Close() error
}

// Meta names a backend writes when it creates a store, in the same atomic
// step, so a ledger always says how it came to be.
const (
	// MetaOrigin holds OriginInit or OriginAction. A ledger from before
	// origins were recorded has none.
	MetaOrigin = "origin"
	// MetaCreatedAt holds when the store was created (RFC 3339, UTC).
	MetaCreatedAt = "created_at"
	// MetaCreatedBy says which program created it ("ghonce v1.2.0, pid
	// 4242 on host"), for a person wondering where a ledger came from.
	MetaCreatedBy = "created_by"
)

// Origins: how a ledger was created.
const (
	// OriginInit: created ahead of any work by `ghonce init`; it has seen
	// every action since, so an action it has no entry for never ran
	// against it.
	OriginInit = "init"
	// OriginAction: created by the first action that found no ledger. An
	// earlier ledger may have been lost, so it cannot vouch for what
	// happened before it existed.
	OriginAction = "action"
)

var (
	// ErrNotFound: no entry has that key.
	ErrNotFound = errors.New("ledger: no entry for that key")
	// ErrFenced: the attempt was taken over; the caller's result must not be recorded.
	ErrFenced = errors.New("ledger: attempt was taken over by a newer claim")
	// ErrDone: a done entry may not be sent back to failed without Force.
	ErrDone = errors.New("ledger: entry is done")
	// ErrBusy: a live attempt holds the entry.
	ErrBusy = errors.New("ledger: entry is held by a running attempt")
	// ErrNotLedger: the file exists but is not a ghonce ledger (or is damaged).
	ErrNotLedger = errors.New("not a ghonce ledger")
	// ErrNoLedger: there is no ledger at the location, and the caller
	// asked not to create one (a read-only verb, a monitor). Its message
	// continues " at PATH; `ghonce init` creates one".
	ErrNoLedger = errors.New("no ledger")
	// ErrUnavailable is wrapped by the error of a ledger that could not be
	// reached, or lost the connection mid-write (a Postgres restart): the
	// write may or may not have happened, and a later try may succeed.
	ErrUnavailable = errors.New("ledger unavailable")
	// ErrNewerSchema: the ledger was written by a newer ghonce.
	ErrNewerSchema = errors.New("ledger was written by a newer ghonce")
)
