package once

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/ghonce/ghonce/ledger"
)

// Changed reports whether this run's description (payload, and its hash)
// differs from the one entry stored when its key was done, and which
// top-level fields of the two differ, sorted (nil when either payload is
// not a JSON object). Both engines act on it by their on-change policy:
// keep the effect and warn, or fail.
func Changed(entry *ledger.Entry, payload []byte, hash string) (changed bool, fields []string) {
	if entry.PayloadHash == hash {
		return false, nil
	}
	var a, b map[string]json.RawMessage
	if json.Unmarshal(entry.Payload, &a) != nil || json.Unmarshal(payload, &b) != nil {
		return true, nil
	}
	for k, v := range b {
		if !bytes.Equal(a[k], v) {
			fields = append(fields, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			fields = append(fields, k)
		}
	}
	slices.Sort(fields)
	return true, fields
}

// Differ says which fields differ, for a message: "head differs", "head
// and title differ"; "description differs" when none is named.
func Differ(fields []string) string {
	switch len(fields) {
	case 0:
		return "description differs"
	case 1:
		return fields[0] + " differs"
	}
	return strings.Join(fields[:len(fields)-1], ", ") + " and " + fields[len(fields)-1] + " differ"
}
