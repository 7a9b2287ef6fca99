package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// bodyFlags is --body / --body-file, as in gh.
type bodyFlags struct {
	body, file string
	set        bool
}

func (b *bodyFlags) add(c *cobra.Command) {
	c.Flags().StringVarP(&b.body, "body", "b", "", "body text")
	c.Flags().StringVarP(&b.file, "body-file", "F", "", `read the body from a file ("-" for standard input)`)
	c.MarkFlagsMutuallyExclusive("body", "body-file")
}

func (b *bodyFlags) read(c *cobra.Command, in io.Reader, required bool) (string, error) {
	switch {
	case c.Flags().Changed("body"):
		return b.body, nil
	case b.file == "-":
		data, err := io.ReadAll(in)
		if err != nil {
			return "", fmt.Errorf("read body from standard input: %w", err)
		}
		return string(data), nil
	case b.file != "":
		data, err := os.ReadFile(b.file)
		if err != nil {
			return "", usagef("read --body-file: %v", err)
		}
		return string(data), nil
	case required:
		return "", usagef("no body: pass --body TEXT or --body-file FILE")
	}
	return "", nil
}

// act runs one action through the engine and prints its result.
func (f *factory) act(ctx context.Context, defStep string, needRepo bool, spec reconcile.Spec) error {
	task, err := f.g.taskOrEnv(f.sys.Getenv)
	if err != nil {
		return err
	}
	repo := ""
	if needRepo {
		if repo, err = f.g.repoOrEnv(f.sys.Getenv); err != nil {
			return err
		}
		if _, err := parseRepo(repo); err != nil {
			return err
		}
	}
	a := reconcile.Action{Task: task, Step: f.g.stepOr(defStep), Repo: repo, Spec: spec}
	// Bad input is refused before the ledger or GitHub is touched.
	if err := (taskkey.Identity{Task: a.Task, Step: a.Step, Kind: spec.Kind(), Repo: repo}).Validate(); err != nil {
		return &usageError{err}
	}
	if err := spec.Validate(reconcile.Key(a)); err != nil {
		return &usageError{err}
	}
	out := f.sys.Out
	if f.g.json {
		out = f.sys.Err // a guarded command's output must not corrupt the JSON
	}
	eng, _, closeLedger, err := f.engine(ctx, needRepo, out)
	if err != nil {
		return err
	}
	defer closeLedger()
	res, err := eng.Do(ctx, a)
	if err != nil {
		return err
	}
	if err := f.printResult(res); err != nil {
		return err
	}
	return f.reportToActions(res)
}

func (f *factory) printResult(r *reconcile.Result) error {
	if f.g.json {
		enc := json.NewEncoder(f.sys.Out)
		return enc.Encode(r)
	}
	what := r.Kind
	switch {
	case r.Number != 0:
		what = fmt.Sprintf("%s #%d", r.Kind, r.Number)
	case r.SHA != "":
		what = fmt.Sprintf("%s at %.12s", r.Kind, r.SHA)
	}
	msg := map[reconcile.Outcome]string{
		reconcile.Created: "created " + what,
		reconcile.Found:   "found " + what + " made by an earlier attempt; recorded it as done",
		reconcile.Skipped: what + " already done; skipped",
	}[r.Outcome]
	fmt.Fprintf(f.sys.Err, "ghonce: %s (key %s)\n", msg, r.Key)
	if r.PayloadChanged {
		fmt.Fprintln(f.sys.Err, "ghonce: this run's payload differs from the one that made it; nothing new was created")
	}
	if r.Warning != "" {
		fmt.Fprintln(f.sys.Err, "ghonce: warning: "+r.Warning)
	}
	switch {
	case r.URL != "":
		fmt.Fprintln(f.sys.Out, r.URL)
	case r.SHA != "":
		fmt.Fprintln(f.sys.Out, r.SHA)
	case r.Ref != "":
		fmt.Fprintln(f.sys.Out, r.Ref)
	}
	return nil
}

func newPRCmd(f *factory) *cobra.Command {
	c := &cobra.Command{Use: "pr", Short: "Pull requests: create, comment"}
	c.AddCommand(newPRCreateCmd(f), newCommentCmd(f, "pr"))
	return c
}

func newPRCreateCmd(f *factory) *cobra.Command {
	var (
		p    reconcile.PR
		body bodyFlags
	)
	c := &cobra.Command{
		Use:   "create --task T --base B --head H --title X (--body Y | --body-file F)",
		Short: "Open a pull request once per (task, step)",
		Long: `Open a pull request once per (task, step, repository, base).

The key does not include the head, title or body: a retry after a crash that
rewords the body or pushed to another branch gets the first pull request back
(outcome "found" or "skipped", payload_changed true), never a second one.

Prints the pull request's URL on stdout; with --json one object with key,
outcome (created|found|skipped), number, url and payload_changed.

` + exitCodesHelp,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			b, err := body.read(c, f.sys.In, true)
			if err != nil {
				return err
			}
			p.Body = b
			return f.act(c.Context(), "pr-create", true, p)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&p.Base, "base", "B", "", "branch to merge into (required)")
	fl.StringVarP(&p.Head, "head", "H", "", "branch with the changes, or OWNER:BRANCH for a fork (required)")
	fl.StringVarP(&p.Title, "title", "t", "", "title (required)")
	fl.BoolVarP(&p.Draft, "draft", "d", false, "open as a draft")
	fl.StringArrayVarP(&p.Labels, "label", "l", nil, "add a label (repeatable)")
	body.add(c)
	return c
}

// newCommentCmd is `ghonce pr comment N` and `ghonce issue comment N`: both
// are issue comments on GitHub and share the "comment" kind, so the key is the
// same whichever verb an agent uses.
func newCommentCmd(f *factory, noun string) *cobra.Command {
	var body bodyFlags
	c := &cobra.Command{
		Use:   "comment NUMBER (--body Y | --body-file F)",
		Short: "Comment on a " + map[string]string{"pr": "pull request", "issue": "issue"}[noun] + " once per (task, step)",
		Long: `Post a comment once per (task, step, repository, number).

GitHub has no uniqueness for comments: ghonce puts a hidden marker with the
key on the comment's first line and, before posting, reads every page of the
thread for a comment by you that carries it. A retry with a reworded body gets
the first comment back.

` + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			n, err := strconv.Atoi(args[0])
			if err != nil || n <= 0 {
				return usagef("invalid number %q: want the issue or pull request number, e.g. 42", args[0])
			}
			b, err := body.read(c, f.sys.In, true)
			if err != nil {
				return err
			}
			return f.act(c.Context(), noun+"-comment", true, reconcile.Comment{Number: n, Body: b})
		},
	}
	body.add(c)
	return c
}

func newIssueCmd(f *factory) *cobra.Command {
	c := &cobra.Command{Use: "issue", Short: "Issues: create, comment"}
	var (
		is   reconcile.Issue
		body bodyFlags
	)
	create := &cobra.Command{
		Use:   "create --task T --title X (--body Y | --body-file F) [--label L]...",
		Short: "File an issue once per (task, step)",
		Long: `File an issue once per (task, step, repository).

The issue carries the label ghonce:<key> (set when it is created) and a hidden
marker with the key; both are looked for before filing.

` + exitCodesHelp,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			b, err := body.read(c, f.sys.In, true)
			if err != nil {
				return err
			}
			is.Body = b
			return f.act(c.Context(), "issue-create", true, is)
		},
	}
	create.Flags().StringVarP(&is.Title, "title", "t", "", "title (required)")
	create.Flags().StringArrayVarP(&is.Labels, "label", "l", nil, "add a label (repeatable)")
	body.add(create)
	c.AddCommand(create, newCommentCmd(f, "issue"))
	return c
}

func newBranchCmd(f *factory) *cobra.Command {
	c := &cobra.Command{Use: "branch", Short: "Branches: create, name"}
	var (
		b    reconcile.Branch
		from string
	)
	create := &cobra.Command{
		Use:   "create NAME (--sha SHA | --from REF)",
		Short: "Create a branch once per (task, step)",
		Long: `Create a branch once per (task, step, repository, name).

The branch is found by an exact ref read. If it exists at the intended commit,
or at a commit that descends from it, it counts as done; a branch of that name
at an unrelated commit is someone else's: exit 1, never adopted.

` + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			b.Name = args[0]
			if (b.SHA == "") == (from == "") {
				return usagef("give exactly one of --sha SHA or --from REF")
			}
			if from != "" {
				sha, err := f.resolveFrom(c.Context(), from)
				if err != nil {
					return err
				}
				b.SHA = sha
			}
			return f.act(c.Context(), "branch-create", true, b)
		},
	}
	create.Flags().StringVar(&b.SHA, "sha", "", "commit the branch points at")
	create.Flags().StringVar(&from, "from", "", "branch, tag or commit to start from (resolved on GitHub)")
	name := &cobra.Command{
		Use:   "name --task T [--step S]",
		Short: "Print a deterministic branch name for a task, for agents that push with git",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			task, err := f.g.taskOrEnv(f.sys.Getenv)
			if err != nil {
				return err
			}
			repo, _ := f.g.repoOrEnv(f.sys.Getenv)
			fmt.Fprintln(f.sys.Out, taskkey.BranchName(taskkey.Identity{Task: task, Step: f.g.stepOr("branch"), Kind: "branch", Repo: repo}))
			return nil
		},
	}
	c.AddCommand(create, name)
	return c
}

func (f *factory) resolveFrom(ctx context.Context, ref string) (string, error) {
	repo, err := f.g.repoOrEnv(f.sys.Getenv)
	if err != nil {
		return "", err
	}
	r, err := parseRepo(repo)
	if err != nil {
		return "", err
	}
	gh, err := f.github(ctx)
	if err != nil {
		return "", err
	}
	sha, err := gh.ResolveCommit(ctx, r, ref)
	if err != nil {
		return "", fmt.Errorf("resolve --from %s: %w", ref, err)
	}
	return sha, nil
}

func newFileCmd(f *factory) *cobra.Command {
	c := &cobra.Command{Use: "file", Short: "Files: put"}
	var (
		fs            reconcile.File
		content, from string
	)
	put := &cobra.Command{
		Use:   "put PATH --branch B --message M (--content S | --content-file F)",
		Short: "Write a file on a branch through the contents API, once per (task, step)",
		Long: `Write a file on a branch once per (task, step, repository, branch, path).

It counts as done when the file on the branch already has exactly the intended
content (git blob hashes, computed locally); different content means not yet.

` + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			fs.Path = args[0]
			switch {
			case c.Flags().Changed("content") && from != "":
				return usagef("give only one of --content or --content-file")
			case c.Flags().Changed("content"):
				fs.Content = []byte(content)
			case from == "-":
				data, err := io.ReadAll(f.sys.In)
				if err != nil {
					return fmt.Errorf("read content from standard input: %w", err)
				}
				fs.Content = data
			case from != "":
				data, err := os.ReadFile(from)
				if err != nil {
					return usagef("read --content-file: %v", err)
				}
				fs.Content = data
			default:
				return usagef("no content: pass --content TEXT or --content-file FILE")
			}
			return f.act(c.Context(), "file-put", true, fs)
		},
	}
	put.Flags().StringVar(&fs.Branch, "branch", "", "branch to commit to (required)")
	put.Flags().StringVarP(&fs.Message, "message", "m", "", "commit message (required)")
	put.Flags().StringVar(&content, "content", "", "file content")
	put.Flags().StringVar(&from, "content-file", "", `read the content from a file ("-" for standard input)`)
	c.AddCommand(put)
	return c
}

func newExecCmd(f *factory) *cobra.Command {
	var x reconcile.Exec
	c := &cobra.Command{
		Use:   "exec --task T --step S [--check CMD] [--on-unconfirmed fail|retry] -- COMMAND [ARGS...]",
		Short: "Run a command with a side effect ghonce cannot see, once per (task, step)",
		Long: `Run COMMAND once per (task, step[, target]).

The key is exported to COMMAND (and to --check) as GHONCE_KEY: hand it to a
service that dedupes on it. --check CMD is your "does it already exist?": exit
0 yes (its output is stored as the reference), exit 1 no, anything else
unknown. Without --check, an attempt that a crash left unconfirmed is settled
by --on-unconfirmed: fail (default: exit 3 and say how to settle it with
'ghonce resolve') or retry (for commands that are safe to repeat).

` + exitCodesHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if c.ArgsLenAtDash() != 0 {
				return usagef("put the command after --, e.g. ghonce exec --task T --step S -- ./notify.sh")
			}
			x.Argv = args
			return f.act(c.Context(), "", false, x)
		},
	}
	c.Flags().StringVar(&x.Check, "check", "", "shell command that exits 0 if the effect already exists, 1 if not")
	c.Flags().StringVar(&x.OnUnconfirmed, "on-unconfirmed", reconcile.OnUnconfirmedFail, "what to do when an earlier attempt may have run: fail or retry")
	c.Flags().StringVar(&x.Tgt, "target", "", "narrow the key, e.g. a recipient")
	return c
}

func newKeyCmd(f *factory) *cobra.Command {
	var kind, target string
	c := &cobra.Command{
		Use:   "key --task T --step S --kind K [--repo O/R] [--target X]",
		Short: "Print the key of an action, for scripts",
		Long: `Print the key ghonce derives for an action. The target is the kind's part of
the identity: the base branch for pr, the issue number for comment, the branch
name for branch, BRANCH:PATH for file, --target for exec, empty for issue.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			task, err := f.g.taskOrEnv(f.sys.Getenv)
			if err != nil {
				return err
			}
			repo := ""
			if kind != "exec" {
				if repo, err = f.g.repoOrEnv(f.sys.Getenv); err != nil {
					return err
				}
			}
			id := taskkey.Identity{Task: task, Step: f.g.stepOr(""), Kind: kind, Repo: repo, Target: target}
			if err := id.Validate(); err != nil {
				return &usageError{err}
			}
			fmt.Fprintln(f.sys.Out, taskkey.Key(id))
			return nil
		},
	}
	c.Flags().StringVar(&kind, "kind", "pr", "kind: pr, issue, comment, branch, file or exec")
	c.Flags().StringVar(&target, "target", "", "the kind's target (see above)")
	return c
}
