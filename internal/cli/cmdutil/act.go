package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/actions"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// readPathOrStdin reads the file a flag names, or standard input for "-".
// A file that cannot be read is a usage error; what is the flag's subject
// ("body", "content") in the message about standard input.
func readPathOrStdin(flag, what, path string, in io.Reader) ([]byte, error) {
	if path == "-" {
		data, err := io.ReadAll(in)
		if err != nil {
			return nil, fmt.Errorf("read %s from standard input: %w", what, err)
		}
		return data, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Usagef("read %s: %v", flag, err)
	}
	return data, nil
}

// RunOr calls runF when a test gave one, else run: a constructor parses
// flags into opts and hands them to one of the two. The context is the
// command's, an argument of the run and never a field of opts.
func RunOr[T any](ctx context.Context, opts *T, runF func(*T) error, run func(context.Context, *T) error) error {
	if runF != nil {
		return runF(opts)
	}
	return run(ctx, opts)
}

// ActOptions is what every acting verb hands to RunAction.
type ActOptions struct {
	Factory *Factory
	Flags   ActFlags
	Spec    reconcile.Spec
	// Off, instead of spec, is an effect GitHub cannot see (a guarded
	// command): offgithub's engine does it, with no repository or GitHub.
	Off      offgithub.Spec
	OnChange string // reconcile.OnChange*; "" is auto
	// After, if set, runs once the artifact is done and its result
	// printed (created, found or skipped), with the GitHub client: gh's
	// -a, -r and -m (see ghRun). Its error fails the run with the
	// artifact recorded as done.
	After func(ctx context.Context, c *ghcheck.Client, res *outcome.Result) error
	// Before, if set, runs with the GitHub client just before the action:
	// it starts what after will need and may read beside the action's
	// own requests (gh's milestones for -m). It must not block.
	Before func(ctx context.Context, c *ghcheck.Client)
	// Names is how the front calls a field of the action in an error
	// (effect.Named), and words an option; nil is ghonce's flags
	// (FlagName, FlagWords), or the action's inputs in its step.
	Names func(field string) string
	Words effect.Words
}

// say is how o's front names options.
func (o ActOptions) say() effect.Words {
	if o.Words != nil {
		return o.Words
	}
	return WordsFor(o.Factory.IO.Getenv)
}

// FlagNames are the fields ghonce's verbs take under another name than
// --FIELD (an underscore a dash); every other field is its flag.
var FlagNames = map[string]string{
	"task":    "--task (or GHONCE_TASK)",
	"body":    "--body (or --body-file)",
	"content": "--content (or --content-file)",
	"name":    "the branch NAME",
	"number":  "NUMBER",
	"path":    "PATH",
}

// FlagName is the flag (or argument) that carries field.
func FlagName(field string) string {
	if n, ok := FlagNames[field]; ok {
		return n
	}
	return "--" + strings.ReplaceAll(field, "_", "-")
}

// FlagWords says an option as ghonce's verbs take it: its flag, and the
// environment variable that sets it when there is one (optionEnv).
type FlagWords struct{}

// optionEnv are the environment variables that set an option.
var optionEnv = map[string]string{"repo": "GH_REPO", "task": "GHONCE_TASK", "ledger": ledger.EnvPath, "app-id": "GHONCE_APP_ID", "app-installation-id": "GHONCE_APP_INSTALLATION_ID"}

func (w FlagWords) Name(o effect.Option) string { return w.say(o, "", " or ") }

func (w FlagWords) Set(o effect.Option) string {
	switch o.Name {
	case "trust-author":
		return "start ghonce with --trust-author " + o.Value + " (or set GHONCE_TRUST_AUTHOR)"
	case "body", "content":
		return fmt.Sprintf("pass --%s TEXT or --%[1]s-file FILE", o.Name)
	case "app-private-key":
		return "pass --app-private-key-file FILE or set GHONCE_APP_PRIVATE_KEY to the PEM text"
	}
	return w.say(o, "pass ", " or set ")
}

// say is verb, o's flag and its value, and or its variable if it has one.
func (FlagWords) say(o effect.Option, verb, or string) string {
	s := verb + strings.TrimSpace("--"+strings.Replace(o.Name, "private-key", "private-key-file", 1)+" "+o.Value)
	if env := optionEnv[o.Name]; env != "" {
		s += or + env
	}
	return s
}

// WordsFor is how the front that runs this process names options: the
// ghonce action's inputs in its own step (actions.ViaAction), else
// ghonce's flags.
func WordsFor(getenv func(string) string) effect.Words {
	if actions.ViaAction(getenv) {
		return actions.Inputs{}
	}
	return FlagWords{}
}

// RunAction runs one action through the engine and prints its result. Bad
// input is refused before the ledger is touched, and before GitHub is but
// for reading what the action leaves to GitHub's default.
func RunAction(ctx context.Context, o ActOptions) error {
	f := o.Factory
	task, err := o.Flags.Task.OrEnv(f.IO.Getenv, f.IO.Err)
	if err != nil {
		return err
	}
	repo := ""
	if o.Off == nil {
		if repo, err = o.Flags.Repo.OrEnv(f.IO.Getenv); err != nil {
			return err
		}
	}
	names := o.Names // how the front calls a field of the action
	if names == nil {
		names = FlagName
		if actions.ViaAction(f.IO.Getenv) {
			names = actions.InputName
		}
	}
	// A *reconcile.InvalidError: exit 2, and nothing recorded.
	var p interface{ Key() string }
	if o.Off != nil {
		p, err = offgithub.Prepare(offgithub.Action{Task: task, Step: string(o.Flags.Step), Spec: o.Off})
	} else {
		a := reconcile.Action{Task: task, Step: string(o.Flags.Step), Repo: repo, Spec: o.Spec, OnChange: o.OnChange}
		// What the action leaves to GitHub's default (a file's branch),
		// filled in as GitHub would and as its key must name it: one read,
		// made only for such an action.
		gh := defaultBranch{flag: names("branch"), client: func(ctx context.Context) (*ghcheck.Client, error) {
			return f.GitHub(ctx, o.Flags.GitHub, o.Flags.Repo)
		}}
		if a, err = reconcile.Complete(ctx, gh, a); err != nil {
			return effect.Named(err, names)
		}
		p, err = reconcile.Prepare(a)
	}
	if err != nil {
		return effect.Named(err, names)
	}
	if state, err := act(ctx, f, o, p); err != nil {
		// Every failure from here on names the key and, once the ledger
		// is open, the entry's state: what a caller needs to settle it.
		if cf := (*outcome.ConflictError)(nil); errors.As(err, &cf) && cf.DoneUnproven {
			err = &InWords{Msg: err.Error() + ": `ghonce resolve " + cf.Key + " --retry --force`", Err: err}
		}
		return &failure.Keyed{Key: p.Key(), State: state, Err: err}
	}
	return nil
}

// defaultBranch reads a repository's default branch for
// reconcile.Complete with the client it makes: an action that names its
// branch needs neither the read nor a token for it.
type defaultBranch struct {
	flag   string // that names the branch instead
	client func(context.Context) (*ghcheck.Client, error)
}

func (d defaultBranch) DefaultBranch(ctx context.Context, r ghcheck.Repo) (string, error) {
	c, err := d.client(ctx)
	if err != nil {
		return "", err
	}
	b, err := c.DefaultBranch(ctx, r)
	if err != nil {
		return "", fmt.Errorf("no branch given, and the default branch could not be read (name one with %s): %w", d.flag, err)
	}
	return b, nil
}

// act runs p; on failure it returns the status of p's entry after the run
// ("" before the ledger is open or when there is no entry).
func act(ctx context.Context, f *Factory, o ActOptions, p interface{ Key() string }) (ledger.Status, error) {
	out := f.IO.Out
	if o.Flags.JSON {
		out = f.IO.Err // a guarded command's output must not corrupt the JSON
	}
	var who *GitHubFlags
	if o.Off == nil {
		who = &o.Flags.GitHub
	}
	l, c, err := f.ledgerAndGitHub(ctx, o.Flags.Ledger, store.CreateForAction, who, o.Flags.Repo)
	if err != nil {
		return "", err
	}
	defer l.Close()
	var gh reconcile.GitHub
	if c != nil {
		gh = c
	}
	// With something to send once the artifact exists (gh's assignees,
	// reviewers and milestone), a pull request's labels go with it, not
	// before it: the engine answers once the create is answered, and the
	// labels and the done record follow beside o.after (WaitErr).
	early := o.After != nil && c != nil
	if o.Before != nil && c != nil {
		o.Before(ctx, c)
	}
	var eng *reconcile.Engine
	var res *outcome.Result
	if op, ok := p.(*offgithub.Prepared); ok {
		res, err = f.OffEngine(l, out, o.Flags.Engine).Do(ctx, op)
	} else {
		eng = f.Engine(l, gh, o.Flags.Engine, func(cfg *reconcile.Config) { cfg.AnswerBeforeTags = early })
		defer eng.Wait()
		res, err = eng.Do(ctx, p.(*reconcile.Prepared))
	}
	if err != nil {
		state := ledger.Status("")
		if e, gerr := l.Get(ctx, p.Key()); gerr == nil {
			state = e.Status
		}
		return state, err
	}
	if oc := o.OnChange; res.PayloadChanged && !res.Updated && oc != reconcile.OnChangeFail {
		res.Warning += changeAdvice(o)
	}
	if err := f.printResult(res, o.Flags.JSON); err != nil {
		return ledger.Done, err
	}
	if early {
		err := o.After(ctx, c, res)
		if terr := eng.WaitErr(); terr != nil {
			state := ledger.Status("")
			if e, gerr := l.Get(ctx, p.Key()); gerr == nil {
				state = e.Status
			}
			return state, terr
		}
		if err != nil {
			return ledger.Done, err
		}
	}
	return ledger.Done, f.reportToActions(res)
}

// changeAdvice is what a run whose description differs from the done
// one's can do about it, in the words of o's front: of ghonce's own
// verbs, only those with a body have --on-change; the gh shim reads
// GHONCE_ON_CHANGE.
func changeAdvice(o ActOptions) string {
	w := o.say()
	if o.OnChange == "" && o.Words == nil {
		return " (use another " + w.Name(effect.Option{Name: "step"}) + " for a new one)"
	}
	return fmt.Sprintf(" (%s edits it, %s stops)", w.Name(effect.Option{Name: "on-change", Value: "update"}), w.Name(effect.Option{Name: "on-change", Value: "fail"}))
}

func (f *Factory) printResult(r *outcome.Result, asJSON bool) error {
	if asJSON {
		return f.WriteJSON(resultJSON{OutcomeJSON: Succeeded(), State: ledger.Done, Result: r})
	}
	what := r.Kind
	switch {
	case r.Number != 0:
		what = fmt.Sprintf("%s #%d", r.Kind, r.Number)
	case r.SHA != "":
		what = fmt.Sprintf("%s at %.12s", r.Kind, r.SHA)
	}
	if r.ArtifactState != "" && r.ArtifactState != "open" {
		what += " (" + r.ArtifactState + ")" // "found pr #3 (closed)": not what a caller expects
	}
	msg := map[outcome.Outcome]string{
		outcome.Created: "created " + what,
		outcome.Found:   "found " + what + " made by an earlier attempt; recorded it as done",
		outcome.Skipped: what + " already done; skipped",
	}[r.Outcome]
	fmt.Fprintf(f.IO.Err, "ghonce: %s (key %s)\n", msg, r.Key)
	if r.PayloadChanged {
		fmt.Fprintln(f.IO.Err, "ghonce: this run's payload differs from the one that made it; nothing new was created")
	}
	if r.Warning != "" {
		f.warn(r.Warning)
	}
	switch {
	case r.URL != "":
		fmt.Fprintln(f.IO.Out, r.URL)
	case r.SHA != "":
		fmt.Fprintln(f.IO.Out, r.SHA)
	case r.Ref != "":
		fmt.Fprintln(f.IO.Out, r.Ref)
	}
	return nil
}

// InWords is an error in a front's own words, the original kept for
// errors.As and the exit code.
type InWords struct {
	Msg string
	Err error
}

func (e *InWords) Error() string { return e.Msg }

func (e *InWords) Unwrap() error { return e.Err }
