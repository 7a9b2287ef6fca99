package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/reconcile"
)

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
	*reconcile.Result
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
