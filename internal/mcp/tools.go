package mcp

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// Where names the repository, as github-mcp-server's tools do.
type Where struct {
	Owner string `json:"owner" jsonschema:"Repository owner (username or organization)"`
	Repo  string `json:"repo" jsonschema:"Repository name"`
}

// Once is the two arguments ghonce adds to every write tool.
type Once struct {
	// Described by model.txt ("task", "step"), as in every tool's schema.
	Task string `json:"task,omitempty"`
	Step string `json:"step,omitempty"`
}

func (w Where) where() Where { return w }
func (o Once) once() Once    { return o }

// CreatePullRequestArgs are create_pull_request's arguments.
type CreatePullRequestArgs struct {
	Where
	Title string `json:"title" jsonschema:"PR title"`
	Body  string `json:"body,omitempty" jsonschema:"PR description"`
	Head  string `json:"head" jsonschema:"Branch containing changes (OWNER:BRANCH for a fork)"`
	Base  string `json:"base" jsonschema:"Branch to merge into"`
	Draft bool   `json:"draft,omitempty" jsonschema:"Create as draft PR"`
	Once
}

// CreateIssueArgs are create_issue's arguments.
type CreateIssueArgs struct {
	Where
	Title  string   `json:"title" jsonschema:"Issue title"`
	Body   string   `json:"body,omitempty" jsonschema:"Issue body content"`
	Labels []string `json:"labels,omitempty" jsonschema:"Labels to apply to this issue"`
	Once
}

// AddIssueCommentArgs are add_issue_comment's arguments. issue_number is a
// JSON number, as in github-mcp-server.
type AddIssueCommentArgs struct {
	Where
	IssueNumber float64 `json:"issue_number" jsonschema:"Issue (or pull request) number to comment on"`
	Body        string  `json:"body" jsonschema:"Comment content"`
	Once
}

// CreateBranchArgs are create_branch's arguments.
type CreateBranchArgs struct {
	Where
	Branch     string `json:"branch" jsonschema:"Name for new branch"`
	FromBranch string `json:"from_branch,omitempty" jsonschema:"Source branch (defaults to repo default)"`
	Once
}

// CreateOrUpdateFileArgs are create_or_update_file's arguments.
type CreateOrUpdateFileArgs struct {
	Where
	Path    string `json:"path" jsonschema:"Path where to create/update the file"`
	Content string `json:"content" jsonschema:"Content of the file, exactly as it should appear once written (plain text, not base64)"`
	Message string `json:"message" jsonschema:"Commit message"`
	Branch  string `json:"branch" jsonschema:"Branch to create/update the file in"`
	SHA     string `json:"sha,omitempty"`
	Once
}

// Output is every write tool's structuredContent: the fields of the CLI's
// --json output.
type Output struct {
	Key            string `json:"key" jsonschema:"The key this call's task and step map to"`
	Kind           string `json:"kind" jsonschema:"pr, issue, comment, branch or file"`
	Task           string `json:"task"`
	Step           string `json:"step"`
	Repo           string `json:"repo,omitempty" jsonschema:"OWNER/NAME"`
	Outcome        string `json:"outcome" jsonschema:"created (this call made it), found (an earlier attempt made it; now recorded) or skipped (already recorded as done; GitHub was not asked)"`
	Number         int    `json:"number,omitempty" jsonschema:"PR or issue number"`
	URL            string `json:"url,omitempty"`
	ID             int64  `json:"id,omitempty" jsonschema:"comment id"`
	SHA            string `json:"sha,omitempty" jsonschema:"commit of a branch, blob of a file"`
	Ref            string `json:"ref,omitempty"`
	PayloadChanged bool   `json:"payload_changed" jsonschema:"true when this call's arguments differ from the ones that made the artifact: nothing new was created for them"`
	Attempts       int    `json:"attempts"`
	Warning        string `json:"warning,omitempty"`

	// ArtifactState: a found or created PR's or issue's state.
	ArtifactState string `json:"artifact_state,omitempty" jsonschema:"open, closed or merged: the PR's or issue's state when this call created or found it (absent when skipped: GitHub was not asked)"`

	// Changed: with payload_changed, the fields that differ.
	Changed []string `json:"changed,omitempty" jsonschema:"with payload_changed: the fields that differ (head, title, body, ...); the artifact was left as it is"`
}

func outputOf(r *reconcile.Result) Output {
	return Output{
		Key: r.Key, Kind: r.Kind, Task: r.Task, Step: r.Step, Repo: r.Repo, Outcome: string(r.Outcome),
		Number: r.Number, URL: r.URL, ID: r.ID, SHA: r.SHA, Ref: r.Ref,
		PayloadChanged: r.PayloadChanged, Changed: r.Changed, Attempts: r.Attempts, Warning: r.Warning,
		ArtifactState: r.ArtifactState,
	}
}

// writeArgs is what every write tool's arguments have.
type writeArgs interface {
	where() Where
	once() Once
}

// writeTool describes one write tool; the flow (task and step defaults,
// validation, the engine, the result text, error mapping) is written once,
// in call.
type writeTool[In writeArgs] struct {
	name string
	// onePer is what the default step makes one of per task ("base
	// branch": one PR per base branch), for the guide's table.
	onePer string
	// spec builds the action's description from the arguments.
	spec func(in In) (reconcile.Spec, error)
	// what names the artifact for the model, e.g. "PR #12".
	what func(in In, r *reconcile.Result) string
}

// The write tools ghonce guards, by github-mcp-server's names; the proxy
// serves them in place of upstream's (guarded.go).
var (
	prTool = writeTool[CreatePullRequestArgs]{
		name: "create_pull_request", onePer: "base branch",
		spec: func(in CreatePullRequestArgs) (reconcile.Spec, error) {
			return reconcile.PR{Base: in.Base, Head: in.Head, Title: in.Title, Body: in.Body, Draft: in.Draft}, nil
		},
		what: func(_ CreatePullRequestArgs, r *reconcile.Result) string { return fmt.Sprintf("PR #%d", r.Number) },
	}
	issueTool = writeTool[CreateIssueArgs]{
		name: "create_issue", onePer: "repository",
		spec: func(in CreateIssueArgs) (reconcile.Spec, error) {
			return reconcile.Issue{Title: in.Title, Body: in.Body, Labels: in.Labels}, nil
		},
		what: func(_ CreateIssueArgs, r *reconcile.Result) string { return fmt.Sprintf("issue #%d", r.Number) },
	}
	commentTool = writeTool[AddIssueCommentArgs]{
		name: "add_issue_comment", onePer: "issue or pull request",
		spec: func(in AddIssueCommentArgs) (reconcile.Spec, error) {
			n, err := issueNumber(in.IssueNumber)
			if err != nil {
				return nil, err
			}
			return reconcile.Comment{Number: n, Body: in.Body}, nil
		},
		what: func(in AddIssueCommentArgs, _ *reconcile.Result) string {
			return fmt.Sprintf("comment on #%d", int(in.IssueNumber))
		},
	}
	branchTool = writeTool[CreateBranchArgs]{
		name: "create_branch", onePer: "branch name",
		spec: func(in CreateBranchArgs) (reconcile.Spec, error) {
			// No from_branch: the kind starts from the default branch.
			return reconcile.Branch{Name: in.Branch, From: in.FromBranch}, nil
		},
		what: func(in CreateBranchArgs, r *reconcile.Result) string {
			return fmt.Sprintf("branch %s at %.12s", in.Branch, r.SHA)
		},
	}
	fileTool = writeTool[CreateOrUpdateFileArgs]{
		name: "create_or_update_file", onePer: "branch and path",
		spec: func(in CreateOrUpdateFileArgs) (reconcile.Spec, error) {
			return reconcile.File{Branch: in.Branch, Path: in.Path, Message: in.Message, Content: []byte(in.Content), Replaces: in.SHA}, nil
		},
		what: func(in CreateOrUpdateFileArgs, _ *reconcile.Result) string {
			return fmt.Sprintf("file %s on branch %s", in.Path, in.Branch)
		},
	}
)

// addWriteTools serves the guarded tools under github-mcp-server's names
// and argument schemas (ghmcp_tools.json), plus optional task and step and
// ghonce's output schema.
func (s *Server) addWriteTools() error {
	var tools []*sdk.Tool
	if err := json.Unmarshal(ghmcpTools, &tools); err != nil {
		return fmt.Errorf("read %s: %w", GitHubMCPToolsFile, err)
	}
	out, err := jsonschema.For[Output](nil)
	if err != nil {
		return fmt.Errorf("infer the output schema: %w", err)
	}
	for _, t := range tools {
		g, ok := guards[t.Name]
		if !ok {
			return fmt.Errorf("%s: %s is not a guarded tool", GitHubMCPToolsFile, t.Name)
		}
		gt, err := guardedTool(t, false)
		if err != nil {
			return err
		}
		gt.OutputSchema = out
		takes := argNames(gt)
		s.srv.AddTool(gt, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			handled(ctx)
			if res, ok := s.serveGuarded(ctx, g, takes, req, false); ok {
				return res, nil
			}
			return invalidResult(fmt.Errorf("ghonce guards only %s's create; this call (%s) needs github-mcp-server behind ghonce: serve with ghonce mcp --upstream -- github-mcp-server stdio", req.Params.Name, g.passWhat)), nil
		})
	}
	return nil
}

// GitHubMCPToolsFile holds the guarded tools as the pinned
// github-mcp-server (tools/github-mcp-server/go.mod) lists them; a test
// compares it with that server's tools/list.
const GitHubMCPToolsFile = "ghmcp_tools.json"

//go:embed ghmcp_tools.json
var ghmcpTools []byte

// GuardedToolNames are the tools ghonce guards with a kind, by
// github-mcp-server's names, sorted: the keys of guards.
func GuardedToolNames() []string { return slices.Sorted(maps.Keys(guards)) }

var no = false

// runWrite is a write tool's handler: the call, logged, and its result or
// its error worded for the model.
func runWrite[In writeArgs](ctx context.Context, s *Server, t writeTool[In], in In) (*sdk.CallToolResult, Output, error) {
	ctx, end := s.begin(ctx)
	defer end()
	r, err := call(ctx, s, t, in)
	if err != nil {
		err = toolError(err)
		s.cfg.Logf("%s: %v", t.name, err)
		return nil, Output{}, err
	}
	s.cfg.Logf("%s: %s %s (task %q, step %q, key %s)", t.name, r.Outcome, t.what(in, r), r.Task, r.Step, r.Key)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: resultText(t.what(in, r), r)}}}, outputOf(r), nil
}

// call is the one flow every write tool goes through. Its errors are the
// engine's and the arguments'; the tool handler words them (toolError).
func call[In writeArgs](ctx context.Context, s *Server, t writeTool[In], in In) (*reconcile.Result, error) {
	a, err := s.action(in.where(), in.once())
	if err != nil {
		return nil, err
	}
	spec, err := t.spec(in)
	if err != nil {
		return nil, err
	}
	a.Spec = spec
	a.OnChange = s.cfg.OnChange
	p, err := reconcile.Prepare(a)
	if err != nil {
		// Named by its key when what the key depends on is valid, as the
		// documented last line of a tool error gives it.
		if k, kerr := reconcile.KeyOf(a); kerr == nil {
			return nil, &failure.Keyed{Key: k, Err: invalid(err)}
		}
		return nil, invalid(err)
	}
	r, err := s.cfg.Engine.Do(ctx, p)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// action is the Action of a call, without its Spec: the task's default
// applied. An empty step is the kind's default, which the engine applies.
func (s *Server) action(w Where, o Once) (reconcile.Action, error) {
	task, err := s.task(o.Task)
	if err != nil {
		return reconcile.Action{}, err
	}
	// As on GitHub (and gh's --repo): "app.git" is app. Prepare checks it.
	repo := strings.TrimSpace(w.Owner) + "/" + strings.TrimSuffix(strings.TrimSpace(w.Repo), ".git")
	return reconcile.Action{Task: task, Step: taskkey.CleanID(o.Step), Repo: repo}, nil
}

// issueNumber is a JSON number that names an issue or pull request.
func issueNumber(n float64) (int, error) {
	if n != math.Trunc(n) || n <= 0 || n > math.MaxInt32 {
		return 0, invalid(fmt.Errorf("issue_number %v: want the issue or pull request number, e.g. 42", n))
	}
	return int(n), nil
}

// resultText is the short text the model reads.
func resultText(what string, r *reconcile.Result) string {
	if r.ArtifactState != "" && r.ArtifactState != "open" {
		what += " (" + r.ArtifactState + ")"
	}
	var b strings.Builder
	switch r.Outcome {
	case reconcile.Created:
		fmt.Fprintf(&b, "created %s", what)
	case reconcile.Found:
		fmt.Fprintf(&b, "already done in an earlier attempt: %s (found on GitHub and recorded; nothing new was created)", what)
	default:
		fmt.Fprintf(&b, "already done in an earlier attempt: %s (nothing new was created)", what)
	}
	if r.URL != "" {
		fmt.Fprintf(&b, ": %s", r.URL)
	}
	fmt.Fprintf(&b, "\ntask %q, step %q, key %s", r.Task, r.Step, r.Key)
	if r.PayloadChanged {
		b.WriteString("\nThis call's arguments differ from the ones that made it; they were not applied. If you meant a genuinely new one, call again with a new step.")
	}
	if r.Warning != "" {
		b.WriteString("\nwarning: " + r.Warning)
	}
	return b.String()
}

// describe names a result's artifact: its URL, else its kind and number.
func describe(r *reconcile.Result) string {
	if r.URL != "" {
		return r.URL
	}
	return fmt.Sprintf("%s #%d", r.Kind, r.Number)
}

// invalidError is bad input: the CLI's exit 2.
type invalidError struct{ err error }

func (e *invalidError) Error() string { return "invalid arguments: " + e.err.Error() }
func (e *invalidError) Unwrap() error { return e.err }

// Usage marks bad input for package failure: the CLI's exit 2.
func (e *invalidError) Usage() bool { return true }

// invalid is err as bad input, with the field it names called by its
// argument.
func invalid(err error) error { return &invalidError{effect.Named(err, argName)} }

// toolError words an error for the model with the meaning of the CLI's exit
// codes. The SDK returns it as a tool result with isError set, never as a
// protocol error. Errors from GitHub are already stripped of the token by
// ghcheck.
func toolError(err error) error {
	return withKind(err, toolMessage(err))
}

// toolMessage is the text of a tool error for the model.
func toolMessage(err error) error {
	var (
		uc *reconcile.UnconfirmedError
		ip *reconcile.InProgressError
		cf *reconcile.ConflictError
		so *reconcile.SameOrAnotherError
		iv *invalidError
	)
	switch {
	case errors.As(err, &iv):
		return err
	case errors.As(err, &uc):
		return fmt.Errorf("unconfirmed: %v: it may have happened or not. Call this tool again with the same arguments and step: it checks GitHub first, creating nothing twice", uc.Err)
	case errors.As(err, &ip):
		return fmt.Errorf("%v. Call again later with the same arguments (never another step): it returns that attempt's result, "+
			"or takes the key over once a dead holder's lease has ended", ip)
	case errors.As(err, &cf):
		return fmt.Errorf("refused: %v. Nothing was created; choose another name, or another step", cf)
	case errors.As(err, &so):
		return fmt.Errorf("%s, and this call's %s is %q. Nothing was created. If this call is that one again, it is done: do not call again. "+
			"If it is another, call again with step %q (keep that step if you retry it)", so.Facts(), so.Field, so.Text, so.NewStep)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("cancelled: %v: if a request had been sent it may have taken effect; call again with the same arguments to settle it", err)
	}
	// Advice, a changed description: the step and the server's settings
	// to give, in the model's words.
	return failure.In(err, modelWords{})
}

// withKind ends msg with the failure's kind, the CLI exit code of the same
// meaning and the key, as `ghonce --json` reports them (package failure is the one
// mapping), so an agent or a runner reading tool errors speaks the same
// vocabulary as one reading the CLI.
func withKind(err, msg error) error {
	d := failure.Describe(err, "mcp", nil)
	tail := fmt.Sprintf("[%s: the CLI's exit %d", d.Error.Kind, d.ExitCode)
	if d.Key != "" {
		tail += ", key " + d.Key
	}
	return fmt.Errorf("%w\n%s]", msg, tail)
}
