package cli

import (
	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/internal/cli/cmdutil"
)

// Cobra's own errors carry no type. As gh does (cmdutil.FlagErrorf), ghonce
// makes each a usage error where it arises, so the failure mapping never
// reads an error's text:
//   - a flag that does not parse: the root's FlagErrorFunc (newRoot);
//   - positional arguments a verb refuses: its Args validator, wrapped by
//     typeArgErrors;
//   - an unknown command: cobra's command lookup refuses it before any verb
//     runs, so a run that ends on a command that is not runnable failed
//     there (lookupError).
//
// ghonce marks no flag required and groups none (cobra's errors for those
// would be untyped too): a verb checks its flags in its run function and
// words what is missing itself.

// typeArgErrors wraps the Args validator of c and every command below it so
// that what it refuses is a usage error.
func typeArgErrors(c *cobra.Command) {
	if v := c.Args; v != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := v(cmd, args); err != nil {
				return cmdutil.Usage(err)
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		typeArgErrors(sub)
	}
}

// lookupError types err, the error of a run that ended on cmd, when cobra's
// command lookup raised it: cmd is nil or only groups others (the root, a
// noun), and such a command fails only when a flag or the command name was
// wrong.
func lookupError(cmd *cobra.Command, err error) error {
	if err == nil || cmd != nil && cmd.Runnable() && !cmd.HasSubCommands() {
		return err
	}
	return cmdutil.Usage(err)
}
