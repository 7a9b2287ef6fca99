package cmdutil

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
)

// LedgerFlag is --ledger: the ledger's location. An empty value is refused
// when the flag is parsed (exit 2): an empty --ledger (an unset variable in
// a script) must not quietly mean the default ledger, nor a file made in
// the working tree.
type LedgerFlag string

// AddLedgerFlag adds --ledger, the ledger's location.
func AddLedgerFlag(c *cobra.Command, l *LedgerFlag) {
	c.Flags().Var(l, "ledger", "ledger file (default $GHONCE_LEDGER, else $XDG_STATE_HOME/ghonce/ledger.db)")
}

func (l *LedgerFlag) String() string { return string(*l) }
func (l *LedgerFlag) Type() string   { return "string" }
func (l *LedgerFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("the ledger location is empty: give a file path or a postgres:// URL, or leave --ledger out for the default")
	}
	*l = LedgerFlag(s)
	return nil
}
