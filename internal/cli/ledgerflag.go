package cli

import (
	"errors"
	"strings"
)

// ledgerValue is --ledger. An empty value is refused when the flag is
// parsed (exit 2): an empty --ledger (an unset variable in a script) must not
// quietly mean the default ledger, nor a file made in the working tree.
type ledgerValue struct{ p *string }

func (v ledgerValue) String() string { return *v.p }
func (v ledgerValue) Type() string   { return "string" }
func (v ledgerValue) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("the ledger location is empty: give a file path or a postgres:// URL, or leave --ledger out for the default")
	}
	*v.p = s
	return nil
}
