package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// StatusArgs are ghonce_status's arguments.
type StatusArgs struct {
	Task  string `json:"task,omitempty" jsonschema:"The task whose entries to list. Default: the server's task."`
	Owner string `json:"owner,omitempty" jsonschema:"Only entries of this repository owner (with repo)"`
	Repo  string `json:"repo,omitempty" jsonschema:"Only entries of this repository (with owner)"`
}

// Entry is one ledger entry as ghonce_status reports it.
type Entry struct {
	Key       string    `json:"key"`
	Status    string    `json:"status" jsonschema:"attempting (may or may not have happened: call the same tool again to settle it), done or failed (nothing was created; a call performs it)"`
	Kind      string    `json:"kind"`
	Step      string    `json:"step"`
	Repo      string    `json:"repo,omitempty"`
	Target    string    `json:"target,omitempty" jsonschema:"base branch of a PR, issue number of a comment, branch name, BRANCH:PATH of a file"`
	Outcome   string    `json:"outcome,omitempty" jsonschema:"for done: created, found or resolved"`
	Number    int       `json:"number,omitempty"`
	URL       string    `json:"url,omitempty"`
	SHA       string    `json:"sha,omitempty"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"last_error,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// StatusOutput is ghonce_status's structuredContent.
type StatusOutput struct {
	Task    string  `json:"task"`
	Entries []Entry `json:"entries"`
}

// KeyArgs are ghonce_key's arguments: the tool and the arguments that
// identify its target.
type KeyArgs struct {
	Tool string `json:"tool" jsonschema:"The write tool: create_pull_request, issue_write, create_issue, add_issue_comment, create_branch or create_or_update_file"`
	Where
	Base        string  `json:"base,omitempty" jsonschema:"create_pull_request: the base branch"`
	IssueNumber float64 `json:"issue_number,omitempty" jsonschema:"add_issue_comment: the issue or pull request number"`
	Branch      string  `json:"branch,omitempty" jsonschema:"create_branch: the new branch; create_or_update_file: the branch written to"`
	Path        string  `json:"path,omitempty" jsonschema:"create_or_update_file: the file's path"`
	Once
}

// KeyOutput is ghonce_key's structuredContent.
type KeyOutput struct {
	Key    string `json:"key"`
	Task   string `json:"task"`
	Step   string `json:"step"`
	Kind   string `json:"kind"`
	Repo   string `json:"repo"`
	Target string `json:"target,omitempty"`
	Status string `json:"status" jsonschema:"the ledger entry's status: attempting, done, failed, or none (never called)"`
	URL    string `json:"url,omitempty"`
}

func (s *Server) addReadTools() {
	readOnly := func(title string) *sdk.ToolAnnotations {
		return &sdk.ToolAnnotations{Title: title, ReadOnlyHint: true, IdempotentHint: true, DestructiveHint: &no, OpenWorldHint: &no}
	}
	sdk.AddTool(s.srv, &sdk.Tool{
		Name: "ghonce_status", Title: "What this task has done (ghonce)", Annotations: readOnly("What this task has done (ghonce)"),
		Description: "List this task's ghonce ledger entries: every write tool call made so far, its status (done, attempting, failed) and what it made. Call it after a restart to see what is already done before you act again; it reads only the local ledger, never GitHub.",
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in StatusArgs) (*sdk.CallToolResult, StatusOutput, error) {
		handled(ctx)
		out, err := s.status(ctx, in)
		if err != nil {
			return nil, StatusOutput{}, toolError(err)
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: statusText(out)}}}, out, nil
	})
	sdk.AddTool(s.srv, &sdk.Tool{
		Name: "ghonce_key", Title: "Key of a call (ghonce)", Annotations: readOnly("Key of a call (ghonce)"),
		Description: "Return the key a write tool call would use (from its task, step, repository and target), and that key's status in the ledger. Two calls with the same key happen once.",
	}, func(ctx context.Context, _ *sdk.CallToolRequest, in KeyArgs) (*sdk.CallToolResult, KeyOutput, error) {
		handled(ctx)
		out, err := s.key(ctx, in)
		if err != nil {
			return nil, KeyOutput{}, toolError(err)
		}
		text := fmt.Sprintf("key %s (task %q, step %q, %s %s %s): %s", out.Key, out.Task, out.Step, out.Kind, out.Repo, out.Target, out.Status)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, out, nil
	})
}

func (s *Server) status(ctx context.Context, in StatusArgs) (StatusOutput, error) {
	task, err := s.task(in.Task)
	if err != nil {
		return StatusOutput{}, err
	}
	if err := taskkey.CheckID("task", task); err != nil {
		return StatusOutput{}, invalid(err)
	}
	repo := ""
	if in.Owner != "" || in.Repo != "" {
		if in.Owner == "" || in.Repo == "" {
			return StatusOutput{}, invalid(fmt.Errorf("repository %q/%q: pass both owner and repo, or neither", in.Owner, in.Repo))
		}
		repo = in.Owner + "/" + in.Repo
	}
	entries, err := s.cfg.Ledger.List(ctx, ledger.ListParams{Task: task})
	if err != nil {
		return StatusOutput{}, fmt.Errorf("list ledger: %w", err)
	}
	out := StatusOutput{Task: task, Entries: make([]Entry, 0, len(entries))}
	for _, e := range entries {
		// GitHub compares owner/name without case, and so does the key.
		if repo != "" && !strings.EqualFold(e.Repo, repo) {
			continue
		}
		out.Entries = append(out.Entries, Entry{
			Key: e.Key, Status: string(e.Status), Kind: e.Kind, Step: e.Step, Repo: e.Repo, Target: e.Target,
			Outcome: e.Outcome, Number: e.Ref.Number, URL: e.Ref.URL, SHA: e.Ref.SHA,
			Attempts: e.Attempts, LastError: e.LastError, UpdatedAt: e.UpdatedAt.UTC(),
		})
	}
	return out, nil
}

func statusText(out StatusOutput) string {
	if len(out.Entries) == 0 {
		return fmt.Sprintf("task %q: nothing done yet", out.Task)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "task %q: %d %s", out.Task, len(out.Entries), map[bool]string{true: "entry", false: "entries"}[len(out.Entries) == 1])
	for _, e := range out.Entries {
		ref := e.URL
		if ref == "" {
			ref = e.SHA
		}
		fmt.Fprintf(&b, "\n- %s %s (step %q, %s %s): %s %s", e.Kind, e.Target, e.Step, e.Repo, e.Key, e.Status, ref)
		if e.Status == string(ledger.Attempting) {
			b.WriteString(" (unconfirmed: call the same tool again with the same task and step to settle it)")
		}
	}
	return b.String()
}

func (s *Server) key(ctx context.Context, in KeyArgs) (KeyOutput, error) {
	g, ok := guards[in.Tool]
	if !ok {
		return KeyOutput{}, invalid(fmt.Errorf("unknown tool %q: want one of %s", in.Tool, strings.Join(GuardedToolNames(), ", ")))
	}
	a, err := s.action(in.Where, in.Once)
	if err != nil {
		return KeyOutput{}, err
	}
	// What the key depends on, by the tool's own argument names.
	raw, err := json.Marshal(in)
	if err == nil {
		a.Spec, err = g.decode(raw, &struct{}{})
	}
	if err != nil {
		return KeyOutput{}, invalid(err)
	}
	// Through the write tools' door: a target they refuse is refused.
	k, err := kinds.KeyOfTarget(a.Spec.Kind(), a.Spec.Target(), a.Task, a.Step, a.Repo)
	if err != nil {
		return KeyOutput{}, invalid(err)
	}
	out := KeyOutput{Key: k, Task: a.Task, Step: cmp.Or(a.Step, reconcile.DefaultStep(a.Spec)), Kind: a.Spec.Kind(), Repo: a.Repo, Target: a.Spec.Target(), Status: "none"}
	e, err := s.cfg.Ledger.Get(ctx, out.Key)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
	case err != nil:
		return KeyOutput{}, fmt.Errorf("read ledger: %w", err)
	default:
		out.Status, out.URL = string(e.Status), e.Ref.URL
	}
	return out, nil
}
