package actions

import (
	"fmt"
	"strings"

	"github.com/ghonce/ghonce/effect"
)

// ViaActionEnv is set to "true" by action.yml's ghonce step: the process
// runs as the ghonce action, whose user writes inputs under with:, not
// flags. A `run: ghonce ...` step in a workflow does not set it, and its
// advice keeps naming flags.
const ViaActionEnv = "GHONCE_VIA_ACTION"

// ViaAction reports whether the ghonce action's own step runs this process
// (inside GitHub Actions, with ViaActionEnv set by action.yml).
func ViaAction(getenv func(string) string) bool {
	_, ok := Detect(getenv)
	return ok && getenv(ViaActionEnv) == "true"
}

// Inputs says an option as the ghonce action's user gives it: an input
// under with: ("on-change: update", "set trust-author: LOGIN").
type Inputs struct{}

func (Inputs) Name(o effect.Option) string  { return strings.TrimSpace(input(o.Name) + " " + o.Value) }
func (w Inputs) Set(o effect.Option) string { return "set " + w.Name(o) }

// inputNames are the options and fields the ghonce action takes under
// another input than their own name.
var inputNames = map[string]string{"content": "content-file:", "name": "branch:"}

// input is the input that carries an option or a field (an underscore a
// dash; the GitHub App's options are github-app-*).
func input(name string) string {
	name = strings.ReplaceAll(name, "_", "-")
	if n, ok := inputNames[name]; ok {
		return n
	}
	if strings.HasPrefix(name, "app-") {
		name = "github-" + name
	}
	return name + ":"
}

// InputName is the input that carries field (an *effect.InvalidError's,
// see effect.Named), as the ghonce action's user writes it under with:.
func InputName(field string) string {
	if field == "body" {
		return "the body: (or body-file:) input"
	}
	return "the " + input(field) + " input"
}

// Warn returns the workflow command that shows msg as a warning on the
// run's page (::warning::), scrubbed of secrets and escaped as Annotate's
// messages are.
func Warn(msg string, secrets []string) string {
	return fmt.Sprintf("::warning title=%s::%s", escapeProperty("ghonce"), escapeData(Scrub(msg, secrets)))
}
