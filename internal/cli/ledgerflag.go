package cli

import (
	"errors"
	"strings"

	"github.com/spf13/cobra"
)

// ledgerFlag is --ledger: the ledger's location. An empty value is refused
// when the flag is parsed (exit 2): an empty --ledger (an unset variable in
// a script) must not quietly mean the default ledger, nor a file made in
// the working tree.
type ledgerFlag string

func addLedgerFlag(c *cobra.Command, l *ledgerFlag) {
	c.Flags().Var(l, "ledger", "ledger file (default $GHONCE_LEDGER, else $XDG_STATE_HOME/ghonce/ledger.db)")
}

func (l *ledgerFlag) String() string { return string(*l) }
func (l *ledgerFlag) Type() string   { return "string" }
func (l *ledgerFlag) Set(s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("the ledger location is empty: give a file path or a postgres:// URL, or leave --ledger out for the default")
	}
	*l = ledgerFlag(s)
	return nil
}
