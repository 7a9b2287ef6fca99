package cli

import "github.com/spf13/cobra"

// The nouns group their verbs; each verb lives in a file of its own.

func newCmdPR(f *factory) *cobra.Command {
	c := &cobra.Command{Use: "pr", Short: "Pull requests: create, comment"}
	c.AddCommand(newCmdPRCreate(f, nil), newCmdComment(f, "pr", nil))
	return c
}

func newCmdIssue(f *factory) *cobra.Command {
	c := &cobra.Command{Use: "issue", Short: "Issues: create, comment"}
	c.AddCommand(newCmdIssueCreate(f, nil), newCmdComment(f, "issue", nil))
	return c
}

func newCmdBranch(f *factory) *cobra.Command {
	c := &cobra.Command{Use: "branch", Short: "Branches: create, name"}
	c.AddCommand(newCmdBranchCreate(f, nil), newCmdBranchName(f, nil))
	return c
}

func newCmdFile(f *factory) *cobra.Command {
	c := &cobra.Command{Use: "file", Short: "Files: put"}
	c.AddCommand(newCmdFilePut(f, nil))
	return c
}
