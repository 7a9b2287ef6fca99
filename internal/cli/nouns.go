package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/internal/cli/cmdutil"
)

// noun gives c its verbs. Alone, or followed by anything that is not one
// of its verbs, it is a usage error (exit 2, one JSON object with --json),
// as a misspelt top-level command is; `--help` shows its help. Cobra
// would show a noun without a Run its help and exit 0, and a runner
// trusting exit 0 would count `ghonce pr craete`, or `ghonce pr` with
// the verb lost, as done.
func noun(c *cobra.Command, verbs ...*cobra.Command) *cobra.Command {
	c.AddCommand(verbs...)
	c.SuggestionsMinimumDistance = 2 // cobra's default, set only on the root
	c.Args = func(c *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		hint := "want one of: " + verbsOf(c)
		if s := c.SuggestionsFor(args[0]); len(s) > 0 {
			hint = fmt.Sprintf("did you mean %q?", s[0])
		}
		return cmdutil.Usagef("unknown command %q for %q: %s", args[0], c.CommandPath(), hint)
	}
	c.RunE = noVerb
	return c
}

// noVerb is the run of a command that only groups others (a noun, or the
// root given flags and no command): a usage error naming its commands.
func noVerb(c *cobra.Command, _ []string) error {
	return cmdutil.Usagef("%q needs a command: want one of: %s", c.CommandPath(), verbsOf(c))
}

// verbsOf names c's commands, for a usage error.
func verbsOf(c *cobra.Command) string {
	var names []string
	for _, v := range c.Commands() {
		if v.IsAvailableCommand() {
			names = append(names, v.Name())
		}
	}
	return strings.Join(names, ", ")
}
