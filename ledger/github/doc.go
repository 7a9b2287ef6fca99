// Package github is the ledger that lives in a GitHub repository: each key's
// entry is a ref outside refs/heads and refs/tags (refs/ghonce/claims/ID),
// pointing at a commit object on the empty tree whose message holds the
// entry and its history. Processes that share nothing but the repository
// (Actions runs on fresh runners, containers, MCP replicas) share the ledger.
//
// # How it keeps the contract
//
//   - Claiming a new key creates its ref (POST .../git/refs): atomic on
//     GitHub, a second create answers 422 "Reference already exists", so of
//     any number of concurrent claimers exactly one creates it.
//   - Every later write makes a commit whose parent is the tip it read and
//     moves the ref without force (PATCH .../git/refs/{ref}): GitHub takes it
//     only as a fast forward, so a racer that moved the ref first makes the
//     write fail ("Update is not a fast forward"); the loser reads again and
//     decides again. That is compare-and-swap on the ref.
//   - An answer lost after a write (a timeout, a 502) is settled by reading
//     the ref again: the commit this process made is unique, so the ref
//     points at it, or the write did not happen.
//   - Every time stored is GitHub's: a commit made without an author date is
//     dated by GitHub's clock, and a stored time is kept relative to the
//     commit that wrote it; "now" for a decision is the Date of GitHub's
//     answer. The runner's clock is never read, so a runner whose clock is
//     hours off holds leases and waits out the in-flight window exactly as
//     one whose clock is right. Date has whole seconds: a lease may look
//     live up to a second longer than it is.
//   - A claim ref is not a branch: no workflow runs on it, no branch
//     protection or ruleset applies, the branch list does not show it and a
//     default clone does not fetch it. A host that refuses the namespace (a
//     422 other than "already exists") is an error; the ledger never falls
//     back to a weaker guarantee.
//
// # What a claim holds, proves, and does not
//
// Whoever can read the repository reads every claim (on a public one,
// anyone), and a commit outlives its ref: a claim holds only a lock and a
// record (encode.go): no description, task, repository, target, error
// text, check output, host or process id; its holder's process is sealed
// so that only its own machine reads it back (holder.go).
//
// Whoever can push to the repository can write a claim. A claim is
// therefore a lock and a record of intent, never proof of an outcome and
// never a source of what to do: the engines act on their own input, and on
// this ledger (reconcile.Config.DoneNeedsProof) confirm a recorded "done"
// on GitHub (an artifact authored by our identity that carries the key),
// bound no look-up by a claim's times, and read no stored description. A
// ref under the claims prefix that holds no claim of its own key is
// skipped by List and Prune (Options.Logf reports it), and refused for its
// own key until Remove deletes it. See docs/guide/repository-ledger.md.
package github
