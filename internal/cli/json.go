package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/reconcile"
)

// outcomeJSON opens every object: ok is exit_code == 0.
type outcomeJSON struct {
	OK       bool `json:"ok"`
	ExitCode int  `json:"exit_code"`
}

func succeeded() outcomeJSON { return outcomeJSON{OK: true} }

// resultJSON is what an acting verb prints: the engine's result, with the
// entry's state (done).
type resultJSON struct {
	outcomeJSON
	State ledger.Status `json:"state"`
	*reconcile.Result
}

// writeJSON prints v as the run's one JSON object.
func (f *factory) writeJSON(v any) error {
	f.printedJSON = true
	if err := encodeJSON(f.sys.Out, v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// encodeJSON writes v as one line of JSON. Strings are written as they
// are: "&", "<" and ">" stay themselves (encoding/json's default escapes
// them for HTML, so a title "a & b" read by jq or a person shows \u0026).
func encodeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
