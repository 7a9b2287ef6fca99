package ghshim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/internal/cli/cmdutil"
)

// NewCmdShim is `ghonce shim DIR`: a gh symlink to this binary in DIR.
func NewCmdShim(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "shim DIR",
		Short: "Put a guarded gh in DIR (a symlink to ghonce) and print the PATH line",
		Long: `Make DIR/gh a symlink to this ghonce, so that an agent whose PATH puts DIR
first runs "gh pr create", "gh issue create", "gh issue comment" and
"gh pr comment" (and gh's aliases "gh pr new", "gh issue new", and your own
from 'gh alias set') once per task (GHONCE_TASK), with gh's own flags and
output.
Every other gh command line goes, verbatim, to the next gh on PATH after DIR
(or GHONCE_GH). Prints the line that puts DIR first on PATH:

  eval "$(ghonce shim ~/.local/ghonce-shim)"

The task comes from GHONCE_TASK (in GitHub Actions, the workflow's default
task); a guarded gh command without one is refused, never run unguarded.
GHONCE_STEP names the step when one task makes two of a kind. gh's -a, -r
and -m are set through the API once the pull request or issue exists, and a
rerun sends only what is missing. GHONCE_SETTLE (a duration) is --settle,
GHONCE_TRUST_AUTHOR (logins, separated by commas) --trust-author.

` + ghExitHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error { return shimRun(f, args[0]) },
	}
}

func shimRun(f *cmdutil.Factory, dir string) error {
	exe, err := f.IO.Executable()
	if err != nil {
		return fmt.Errorf("find ghonce's own path: %w", err)
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return fmt.Errorf("find ghonce's own path: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return cmdutil.Usagef("shim directory %q: %v", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return fmt.Errorf("create shim directory: %w", err)
	}
	link := filepath.Join(abs, "gh")
	switch cur, err := os.Readlink(link); {
	case err == nil && cur == exe:
		// Already in place.
	case err == nil || !errors.Is(err, fs.ErrNotExist):
		return cmdutil.Usagef("%s exists and is not a link to %s: remove it or choose another directory (ghonce never overwrites a file)", link, exe)
	default:
		if err := os.Symlink(exe, link); err != nil {
			return fmt.Errorf("create shim: %w", err)
		}
	}
	fmt.Fprintf(f.IO.Err, "ghonce: %s -> %s; put %s first on PATH:\n", link, exe, abs)
	fmt.Fprintf(f.IO.Out, "export PATH=%s:\"$PATH\"\n", shellQuote(abs))
	return nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	safe := true
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '/' || r == '.' || r == '_' || r == '-' || r == '+') {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	out := "'"
	for _, r := range s {
		if r == '\'' {
			out += `'\''`
		} else {
			out += string(r)
		}
	}
	return out + "'"
}
