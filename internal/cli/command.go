package cli

import "github.com/spf13/cobra"

// Command returns ghonce's root command with every verb attached, as Main
// runs it, for tools that read the command tree (the generated CLI
// reference, tools/clidoc). Running it is Main's job, not the caller's.
func Command(sys IO) *cobra.Command {
	root, _ := newRoot(sys)
	return root
}
