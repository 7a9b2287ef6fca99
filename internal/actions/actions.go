// Package actions is everything ghonce does differently inside a GitHub
// Actions job: it detects the runner from its environment, derives a task
// that is the same for every attempt of a job on the same subject, writes
// step outputs and a job-summary line, and turns errors into workflow
// commands (::error::, ::warning::) with secrets scrubbed.
//
// Every function works on an environment getter and paths, never on the
// process's own environment, so each is testable in process.
//
// Runner environment reference:
// https://docs.github.com/actions/reference/variables-reference#default-environment-variables
package actions

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// ActionsBot is the login that authors what Actions' GITHUB_TOKEN creates.
const ActionsBot = "github-actions[bot]"

// Env is what ghonce reads of a runner's environment.
type Env struct {
	Workflow   string // GITHUB_WORKFLOW: the workflow's name (its file path when unnamed)
	Job        string // GITHUB_JOB: the job's id in the workflow file
	RunID      string // GITHUB_RUN_ID: stable across re-runs of a run
	RunAttempt int    // GITHUB_RUN_ATTEMPT: 1, then 2, 3... on each re-run (0 if unset)
	EventName  string // GITHUB_EVENT_NAME
	EventPath  string // GITHUB_EVENT_PATH: the webhook payload that triggered the run
	Output     string // GITHUB_OUTPUT: the step's output file
	Summary    string // GITHUB_STEP_SUMMARY: the step's job-summary file
}

// Detect reports whether ghonce runs inside a GitHub Actions job
// (GITHUB_ACTIONS=true) and, if so, what the runner tells it.
func Detect(getenv func(string) string) (Env, bool) {
	if getenv == nil || getenv("GITHUB_ACTIONS") != "true" {
		return Env{}, false
	}
	return Env{
		Workflow:   getenv("GITHUB_WORKFLOW"),
		Job:        getenv("GITHUB_JOB"),
		RunID:      getenv("GITHUB_RUN_ID"),
		RunAttempt: atoiOr0(getenv("GITHUB_RUN_ATTEMPT")),
		EventName:  getenv("GITHUB_EVENT_NAME"),
		EventPath:  getenv("GITHUB_EVENT_PATH"),
		Output:     getenv("GITHUB_OUTPUT"),
		Summary:    getenv("GITHUB_STEP_SUMMARY"),
	}, true
}

// RunOf is the Actions run getenv's job is in, for reconcile.Config.Run:
// its repository (GITHUB_REPOSITORY), id and attempt. ok is false outside
// Actions or without a numeric run id.
func RunOf(getenv func(string) string) (repo string, id int64, attempt int, ok bool) {
	env, in := Detect(getenv)
	id, err := strconv.ParseInt(env.RunID, 10, 64)
	if !in || err != nil {
		return "", 0, 0, false
	}
	return getenv("GITHUB_REPOSITORY"), id, env.RunAttempt, true
}

// DefaultTask derives the task for a job that named none. It is
//
//	gha/WORKFLOW/JOB/#N      when the event's payload names an issue or pull request N
//	gha/WORKFLOW/JOB/run-ID  otherwise (push, schedule, workflow_dispatch), ID = GITHUB_RUN_ID
//
// so every attempt of the same job on the same subject (a re-run of failed
// jobs, a second run for the same issue) shares one task, and another job,
// workflow or subject gets another. GITHUB_RUN_ATTEMPT is never part of it:
// a re-run must find what the first attempt made. Matrix legs share a job id
// and so a task: set the task (or the step) yourself there, and in a job that
// opens several pull requests.
//
// why says, for the status line, what the task was derived from. An error
// says why no task could be derived; the caller says how to give one. The event
// payload is read with readFile; a payload that cannot be read or parsed is
// an error rather than a silent fall back to the run id, which would give
// two runs for the same issue two tasks.
func DefaultTask(getenv func(string) string, readFile func(string) ([]byte, error)) (task, why string, err error) {
	env, ok := Detect(getenv)
	if !ok {
		return "", "", errors.New("derive task: not in GitHub Actions (GITHUB_ACTIONS is not true)")
	}
	if env.Workflow == "" || env.Job == "" {
		return "", "", errors.New("derive task: GITHUB_WORKFLOW or GITHUB_JOB is not set")
	}
	prefix := "gha/" + env.Workflow + "/" + env.Job + "/"
	if env.EventPath != "" {
		n, kind, err := eventSubject(env.EventPath, readFile)
		if err != nil {
			return "", "", err
		}
		if n > 0 {
			return prefix + "#" + strconv.Itoa(n), fmt.Sprintf("workflow, job and %s #%d", kind, n), nil
		}
	}
	if env.RunID == "" {
		return "", "", errors.New("derive task: the event names no issue or pull request and GITHUB_RUN_ID is not set")
	}
	return prefix + "run-" + env.RunID, "workflow, job and run id " + env.RunID + " (the event names no issue or pull request)", nil
}

// eventSubject reads the issue or pull request number from an event
// payload: issue.number (issues, issue_comment, also on a pull request's
// conversation), pull_request.number (pull_request, pull_request_target,
// pull_request_review...), else 0.
func eventSubject(path string, readFile func(string) ([]byte, error)) (int, string, error) {
	b, err := readFile(path)
	if err != nil {
		return 0, "", fmt.Errorf("derive task: read event payload GITHUB_EVENT_PATH: %w", err)
	}
	var ev struct {
		Issue *struct {
			Number      int             `json:"number"`
			PullRequest json.RawMessage `json:"pull_request"`
		} `json:"issue"`
		PullRequest *struct {
			Number int `json:"number"`
		} `json:"pull_request"`
	}
	if err := json.Unmarshal(b, &ev); err != nil {
		return 0, "", fmt.Errorf("derive task: parse event payload %s: %w", filepath.Base(path), err)
	}
	switch {
	case ev.Issue != nil && ev.Issue.Number > 0:
		if len(ev.Issue.PullRequest) > 0 && string(ev.Issue.PullRequest) != "null" {
			return ev.Issue.Number, "pull request", nil
		}
		return ev.Issue.Number, "issue", nil
	case ev.PullRequest != nil && ev.PullRequest.Number > 0:
		return ev.PullRequest.Number, "pull request", nil
	}
	return 0, "", nil
}

// JobTokenEnv names the variable the composite action sets to the job's own
// GITHUB_TOKEN, so ghonce can tell it from another installation token (an
// App's, say) passed as the token.
const JobTokenEnv = "GHONCE_JOB_TOKEN"

// AssumeActionsBot reports whether, inside Actions, a token that cannot
// read GET /user should be taken for the job's GITHUB_TOKEN, whose
// artifacts github-actions[bot] authors. When the job token is known
// (JobTokenEnv, set by the action) the token must be it: an App's
// installation token authors as SLUG[bot], and assuming github-actions[bot]
// for it would make a re-run miss what the first attempt made. In a plain
// run: step the job token is not known and it is assumed.
func AssumeActionsBot(getenv func(string) string, token string) bool {
	if _, ok := Detect(getenv); !ok {
		return false
	}
	job := getenv(JobTokenEnv)
	return job == "" || job == token
}

// oneLine folds a value onto one line, for a summary or a message.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " ")
}

// atoiOr0 is s as a positive number, else 0.
func atoiOr0(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0
	}
	return n
}
