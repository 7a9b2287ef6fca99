package cmdutil

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/term"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
)

// IO is what a command may touch of the outside world.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	Getenv   func(string) string
	Now      func() time.Time
	// Sleep, if set, is how the run waits on Now's clock: the write
	// pacer's waits (nil: the wall clock). Tests inject it.
	Sleep      func(ctx context.Context, d time.Duration) error
	Executable func() (string, error) // for demo, which re-runs this binary
	// IsTerminal reports whether one of the streams above is a terminal
	// (nil: an *os.File on one); tests inject it.
	IsTerminal func(stream any) bool
}

// System returns the process's real IO.
func System() IO {
	return IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv, Now: time.Now, Executable: os.Executable}
}

// Usage marks err as bad input (exit 2).
func Usage(err error) error { return &failure.UsageError{Err: err} }

// Usagef is a usage error (exit 2) worded as fmt.Errorf words it.
func Usagef(format string, args ...any) error { return failure.Usagef(format, args...) }

// SilentError carries an exit code for an outcome the verb has reported
// itself, on stderr and (with --json) in its own object on stdout.
type SilentError struct{ Code int }

func (e *SilentError) Error() string { return fmt.Sprintf("exit %d", e.Code) }

// OnTerminal reports whether stream (sys.In, sys.Out or sys.Err) is a
// terminal.
func (sys IO) OnTerminal(stream any) bool {
	if sys.IsTerminal != nil {
		return sys.IsTerminal(stream)
	}
	return IsTerminal(stream)
}

// IsTerminal reports whether stream is a terminal.
func IsTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// OrDash is s, or "-" for an empty cell.
func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// OutcomeJSON opens every object: ok is exit_code == 0.
type OutcomeJSON struct {
	OK       bool `json:"ok"`
	ExitCode int  `json:"exit_code"`
}

// Succeeded opens the object of a run that succeeded.
func Succeeded() OutcomeJSON { return OutcomeJSON{OK: true} }

// resultJSON is what an acting verb prints: the engine's result, with the
// entry's state (done).
type resultJSON struct {
	OutcomeJSON
	State ledger.Status `json:"state"`
	*outcome.Result
}

// WriteJSON prints v as the run's one JSON object.
func (f *Factory) WriteJSON(v any) error {
	f.PrintedJSON = true
	if err := EncodeJSON(f.IO.Out, v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// EncodeJSON writes v as one line of JSON. Strings are written as they
// are: "&", "<" and ">" stay themselves (encoding/json's default escapes
// them for HTML, so a title "a & b" read by jq or a person shows \u0026).
func EncodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
