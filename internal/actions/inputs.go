package actions

import (
	"fmt"
	"strings"
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

// inputWords puts the CLI's own advice ("--on-change update", "pass
// --repo") in the words of action.yml's inputs ("on-change: update", "set
// repo:"); bad input the engine refuses names its field (InputName).
// Phrases, not flags alone: a command a person runs elsewhere (`ghonce resolve KEY --done`) keeps its
// flags.
var inputWords = strings.NewReplacer(
	"--on-change update", "on-change: update",
	"--on-change fail", "on-change: fail",
	"--on-change warn", "on-change: warn",
	"another --step", "another step:",
	"(e.g. --step ", "(e.g. step: ",
	"pass --body TEXT or --body-file FILE", "set body: or body-file:",
	"give only one of --body or --body-file", "give only one of body: or body-file:",
	"pass --repo OWNER/NAME or set GH_REPO", "set repo: to OWNER/NAME",
	"pass --repo OWNER/NAME to find it, or --app-installation-id", "set github-app-installation-id:",
	"pass --repo OWNER/NAME", "set repo: to OWNER/NAME",
	"check --repo", "check repo:",
	"start ghonce with --trust-author LOGIN, the login that authors its artifacts", "set trust-author: LOGIN, the login that authors its artifacts",
	"start ghonce with --trust-author ", "set trust-author: ",
	"pass --trust-author ", "set trust-author: ",
	"or --trust-author LOGIN", "or trust-author: LOGIN",
	"pass --task ID or set GHONCE_TASK", "set task:",
	"pass --content TEXT or --content-file FILE", "set content-file:",
	"pass --ledger PATH or set GHONCE_LEDGER", "set ledger:",
	"(--ledger PATH or GHONCE_LEDGER chooses the ledger)", "(ledger: chooses the ledger)",
	"(--ledger, GHONCE_LEDGER)", "(ledger:)",
	"longer than --stale", "longer than stale:",
	"(--app-id, GHONCE_APP_ID)", "(github-app-id:)",
	"pass --app-private-key-file FILE or set GHONCE_APP_PRIVATE_KEY to the PEM text", "set github-app-private-key: to the PEM text (from a secret)",
	"(--app-installation-id)", "(github-app-installation-id:)",
)

// inputNames are the fields of an action the ghonce action takes under
// another input than the field's own name (an underscore a dash).
var inputNames = map[string]string{"body": "body: (or body-file:)", "content": "content-file:", "name": "branch:"}

// InputName is the input that carries field (an *effect.InvalidError's,
// see effect.Named), as the ghonce action's user writes it under with:.
func InputName(field string) string {
	if n, ok := inputNames[field]; ok {
		return "the " + n + " input"
	}
	return "the " + strings.ReplaceAll(field, "_", "-") + ": input"
}

// Advice is msg, advice written for the CLI, in the words of the action's
// inputs when the ghonce action runs this process (ViaAction); msg as it
// is otherwise.
func Advice(getenv func(string) string, msg string) string {
	if !ViaAction(getenv) {
		return msg
	}
	return inputWords.Replace(msg)
}

// Warn returns the workflow command that shows msg as a warning on the
// run's page (::warning::), scrubbed of secrets and escaped as Annotate's
// messages are.
func Warn(msg string, secrets []string) string {
	return fmt.Sprintf("::warning title=%s::%s", escapeProperty("ghonce"), escapeData(Scrub(msg, secrets)))
}
