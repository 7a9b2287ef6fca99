package actions

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/ghonce/ghonce/internal/secret"
)

// Result is what one ghonce action did, as a step reports it. The CLI fills
// it from the engine's result.
type Result struct {
	Kind, Key, Task, Step string
	Outcome               string // created, found or skipped
	Number                int
	URL, SHA, Ref         string
	PayloadChanged        bool
	// ArtifactState is a found or created PR's or issue's state: open,
	// closed or merged ("" when GitHub was not asked).
	ArtifactState string
	// RunAttempt is GITHUB_RUN_ATTEMPT: above 1 on a re-run of this run.
	RunAttempt int
	// Unrecorded is true when the ledger held no earlier attempt of this
	// key, as on every fresh runner (a re-run): a "found" then came from
	// GitHub alone.
	Unrecorded bool
}

// Outputs are the step outputs for r: key, outcome, task, payload_changed,
// and number, url and sha when the kind has them.
func (r Result) Outputs() map[string]string {
	out := map[string]string{
		"key":             r.Key,
		"outcome":         r.Outcome,
		"task":            r.Task,
		"url":             r.URL,
		"sha":             r.SHA,
		"payload_changed": strconv.FormatBool(r.PayloadChanged),
		"artifact_state":  r.ArtifactState,
	}
	if r.Number != 0 {
		out["number"] = strconv.Itoa(r.Number)
	}
	return out
}

// SummaryLine is one markdown line for the job summary saying what happened
// and why.
func (r Result) SummaryLine() string {
	what := r.Kind
	switch {
	case r.Number != 0 && r.URL != "":
		what = fmt.Sprintf("%s [#%d](%s)", r.Kind, r.Number, r.URL)
	case r.Number != 0:
		what = fmt.Sprintf("%s #%d", r.Kind, r.Number)
	case r.SHA != "":
		what = fmt.Sprintf("%s at `%.12s`", r.Kind, r.SHA)
	case r.URL != "":
		what = fmt.Sprintf("[%s](%s)", r.Kind, r.URL)
	}
	if r.ArtifactState != "" && r.ArtifactState != "open" {
		what += " (" + r.ArtifactState + ")"
	}
	var why string
	switch r.Outcome {
	case "created":
		why = "**created** " + what
	case "found":
		if r.Unrecorded {
			// What made it is not known: an earlier attempt of this run,
			// or another run of the same task (another event on the same
			// issue, say). Only GITHUB_RUN_ATTEMPT tells a re-run.
			earlier := "an earlier run of this task (or an earlier attempt of this one)"
			if r.RunAttempt > 1 {
				earlier = fmt.Sprintf("an earlier attempt of this run (this is attempt %d) or an earlier run of this task", r.RunAttempt)
			}
			why = "**found** " + what + " on GitHub, made by " + earlier + "; this runner's ledger had no record of it (a runner's ledger lasts one job), so GitHub was asked; nothing new was created"
		} else {
			why = "**found** " + what + " on GitHub, made by an earlier attempt the ledger had left attempting; recorded it as done"
		}
	case "skipped":
		why = "**skipped** " + what + ": already done (the ledger records it)"
	default:
		why = r.Outcome + " " + what
	}
	if r.PayloadChanged {
		why += "; this run's text or head differs from the one that made it and was not applied"
	}
	return fmt.Sprintf("- ghonce %s (step `%s`, task `%s`, key `%s`)", why, code(r.Step), code(r.Task), code(r.Key))
}

// code makes s safe inside a markdown code span on one line.
func code(s string) string { return strings.ReplaceAll(oneLine(s), "`", "'") }

// Annotate returns the workflow command that reports a failed run with exit
// code exit and message msg, or "" for exit 0. Exits 1, 2 and 5 are errors
// (a person must act), 3 and 4 warnings with the hint to re-run. msg is
// scrubbed of secrets (see Scrub) and escaped as the runner's command
// format requires, so a message cannot break out of its command or start a
// new one. The runner reads workflow commands from stdout and stderr; ghonce
// writes them to stderr, keeping stdout for data.
//
// Reference: https://docs.github.com/actions/reference/workflow-commands-for-github-actions
func Annotate(exit int, msg string, secrets []string) string {
	msg = Scrub(msg, secrets)
	if exit == 3 || exit == 4 {
		// The advice below is a sentence of its own.
		msg = strings.TrimRight(msg, " \n")
		if !strings.HasSuffix(msg, ".") {
			msg += "."
		}
	}
	var level string
	switch exit {
	case 0:
		return ""
	case 3:
		level = "warning"
		msg += " Re-run the job (Re-run failed jobs, or a new run): ghonce looks on GitHub before it creates anything, so a re-run is safe."
	case 4:
		level = "warning"
		msg += " Re-run the job once the other run has finished, or, if it died, once its lease has ended (the time above);" +
			" or set the action's wait: input to wait for it. A re-run finds what the other run made."
	default:
		level = "error"
	}
	return fmt.Sprintf("::%s title=%s::%s", level, escapeProperty("ghonce (exit "+strconv.Itoa(exit)+")"), escapeData(msg))
}

// Mask is the workflow command that has the runner replace value with ***
// in the job's log from then on; it must come before anything may print
// value.
func Mask(value string) string { return "::add-mask::" + escapeData(value) }

// escapeData escapes a workflow command's message for the runner, which
// decodes %0D, %0A and %25 in it (actions/runner, ActionCommand.cs).
func escapeData(s string) string {
	return strings.NewReplacer("\r", "%0D", "\n", "%0A").Replace(escapePercent(s))
}

// escapeProperty escapes a workflow command's property value, in which the
// runner decodes %3A and %2C too.
func escapeProperty(s string) string {
	return strings.NewReplacer("\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(escapePercent(s))
}

// percentCode is a % the runner would read as the start of a code.
var percentCode = regexp.MustCompile(`%([0-9A-Fa-f]{2})`)

// escapePercent escapes a % only where the runner would decode it: "50%"
// stays as it is, so the line reads right both on the run's page and to
// whatever reads ghonce's stderr as it is (an agent that called the gh
// shim, a log piped through another program); "%0A" becomes "%250A", which
// the runner shows as "%0A".
func escapePercent(s string) string { return percentCode.ReplaceAllString(s, "%25$1") }

var (
	// A password in a URL's userinfo (postgres://user:secret@host/db).
	urlPasswordRE = regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://[^/\s:@]*):[^@\s/]*@`)
	// A key=value password in a libpq connection string.
	kvPasswordRE = regexp.MustCompile(`(?i)\b(password|sslpassword)\s*=\s*('[^']*'|\S+)`)
	pemRE        = regexp.MustCompile(`(?s)-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)`)
)

// Scrub removes secrets from s: every non-empty string in secrets (tokens,
// a private key), a PEM private key, anything shaped like a GitHub token
// (secret.Shapes: a stateless installation token whole, dots included), and
// a password in a URL or a connection string.
func Scrub(s string, secrets []string) string {
	var set secret.Set
	set.Add(secrets...)
	s = set.Scrub(pemRE.ReplaceAllString(s, "[REDACTED PRIVATE KEY]"))
	s = urlPasswordRE.ReplaceAllString(s, "$1:[REDACTED]@")
	return kvPasswordRE.ReplaceAllString(s, "$1=[REDACTED]")
}
