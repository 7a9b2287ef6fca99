// Package failure is the public package github.com/ghonce/ghonce/failure
// under the import path the front ends of this module have always used:
// every name here is that package's, so there is one mapping from an error
// to its exit code, kind and next step.
package failure

import pub "github.com/ghonce/ghonce/failure"

// Exit codes, kinds and the types of package failure.
const (
	ExitOK          = pub.ExitOK
	ExitError       = pub.ExitError
	ExitUsage       = pub.ExitUsage
	ExitUnconfirmed = pub.ExitUnconfirmed
	ExitInProgress  = pub.ExitInProgress
	ExitStale       = pub.ExitStale
	ExitDuplicates  = pub.ExitDuplicates

	Usage       = pub.Usage
	Credentials = pub.Credentials
	Refused     = pub.Refused
	Conflict    = pub.Conflict
	Ledger      = pub.Ledger
	Unconfirmed = pub.Unconfirmed
	InProgress  = pub.InProgress
	Stale       = pub.Stale
	Other       = pub.Other
)

type (
	Kind               = pub.Kind
	Error              = pub.Error
	Failure            = pub.Failure
	UsageError         = pub.UsageError
	MissingCredentials = pub.MissingCredentials
	LedgerError        = pub.LedgerError
	Keyed              = pub.Keyed
)

// Describe is pub.Describe.
func Describe(err error, verb string) Failure { return pub.Describe(err, verb) }

// Message is pub.Message.
func Message(err error) string { return pub.Message(err) }

// Next is pub.Next.
func Next(kind Kind, key string) string { return pub.Next(kind, key) }

// Usagef is pub.Usagef.
func Usagef(format string, args ...any) error { return pub.Usagef(format, args...) }
