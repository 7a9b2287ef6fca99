// Package clidoc renders ghonce's CLI reference (docs/reference/cli/) from
// the cobra commands themselves, one Markdown page per command, so the
// reference says what `ghonce VERB --help` says, and the sections of the
// guides and action.yml generated from the MCP server and the kinds'
// declarations (GuideSections). `make docs` writes them (tools/docgen);
// the docs tests fail when the committed pages differ.
package clidoc

import (
	"bytes"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"

	"github.com/ghonce/ghonce/internal/cli"
)

// Pages returns the reference: file name (ghonce_pr_create.md, ...) to
// Markdown. It is deterministic: no dates, no values from the machine it
// runs on (the environment it reads is empty).
func Pages() (map[string][]byte, error) {
	root := cli.Command(emptyIO())
	root.InitDefaultCompletionCmd()
	root.DisableAutoGenTag = true
	pages := map[string][]byte{}
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if !c.IsAvailableCommand() && c != root {
			return nil
		}
		c.DisableAutoGenTag = true
		var b bytes.Buffer
		if err := doc.GenMarkdownCustom(c, &b, func(s string) string { return s }); err != nil {
			return fmt.Errorf("render %s: %w", c.CommandPath(), err)
		}
		pages[fileName(c)] = b.Bytes()
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(root); err != nil {
		return nil, err
	}
	pages["README.md"] = index(root)
	return pages, nil
}

// emptyIO is a world with nothing in it: no input, no environment, the
// clock at 1970.
func emptyIO() cli.IO {
	return cli.IO{
		In: strings.NewReader(""), Out: io.Discard, Err: io.Discard,
		Getenv: func(string) string { return "" },
		Now:    func() time.Time { return time.Unix(0, 0).UTC() },
		Executable: func() (string, error) {
			return "", fmt.Errorf("find executable: not available while rendering docs")
		},
	}
}

// fileName is cobra/doc's own name for c's page.
func fileName(c *cobra.Command) string {
	return strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
}

// index lists every command with its one-line summary.
func index(root *cobra.Command) []byte {
	var b bytes.Buffer
	b.WriteString("# CLI reference\n\n")
	b.WriteString("Generated from the commands themselves by `make docs` (tools/docgen); do not edit by hand.\n")
	b.WriteString("Each page is what `ghonce VERB --help` prints. Exit codes: [../exit-codes.md](../exit-codes.md); `--json` objects: [../json.md](../json.md); environment: [../configuration.md](../configuration.md).\n\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != root {
			return
		}
		fmt.Fprintf(&b, "- [%s](%s): %s\n", c.CommandPath(), path.Base(fileName(c)), c.Short)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	return b.Bytes()
}
