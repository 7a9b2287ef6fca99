// Package reliability is ghonce's crash, race and fault matrix: it runs the
// real ghonce binary (built with -tags ghonce_crashpoints, so it can kill
// itself at named points) against the fake GitHub in fixtures, kills it with
// SIGKILL at every interesting moment of every kind of side effect, reruns
// it as a restarted agent would until it succeeds, and counts what GitHub
// (the fake) ends up holding:
//
//   - duplicates: artifacts beyond the first for one key (more than one PR,
//     issue, comment, branch creation, file commit or command effect);
//   - lost actions: a final exit 0 (created, found or skipped) whose artifact
//     does not exist, or is not the one reported;
//   - runs that needed a person: a trial that never reached exit 0 within its
//     reruns, with the cause ghonce printed.
//
// The matrix has seven parts: precise kill points per kind, a randomised
// kill loop, races of 16 processes (one ledger, and separate ledgers),
// GitHub faults, a holder in another PID namespace (live, and killed) with
// a rerun in this one, bad input, and a search of every output and ledger
// file for the token. Two more run the same trials on a ledger that
// separate machines (each run its own HOME) share: pg, a Postgres ledger
// (kill points, randomised kills, races), and gh, the repository itself
// (GHONCE_LEDGER=github: kill points, randomised kills, races, and the
// faults with the repository ledger's own, each of its writes answered by
// a dropped connection, a 502 or a 504). A shared ledger is a parameter of
// those parts (sharedLedger), not a copy of them. TestMatrix runs it; its
// profile sets the size:
//
//	go test ./tests/reliability                          # smoke: seconds, part of `make test`
//	make reliability-short                                  # CI: a few minutes
//	make reliability                                        # full: writes docs/reliability.md
//
// No part synchronises with sleeps: kills happen at crash points, in the
// fake's BeforeWrite and OnCommit hooks (which run while the client waits
// for its answer, and may also hold it there while another process runs),
// in the command-effect service's handler, or at a random delay (the
// experiment itself). Processes start together behind a barrier
// (their standard input) and are always reaped.
package reliability
