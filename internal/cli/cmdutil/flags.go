package cmdutil

import (
	_ "embed"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/human"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// The flags several commands read. Each command's options struct holds the
// ones it reads, added by the helpers below (AddRepoFlag(c, &opts.Repo),
// ...), so its help lists exactly those; what a flag's value means, with
// the environment behind it, is a method of the flag's small type.

// RepoFlag is --repo (-R): the repository an action is on.
type RepoFlag string

// AddRepoFlag adds --repo (-R), the repository an action is on.
func AddRepoFlag(c *cobra.Command, r *RepoFlag) {
	c.Flags().StringVarP((*string)(r), "repo", "R", "", "repository OWNER/NAME (default $GH_REPO, else $GITHUB_REPOSITORY)")
}

// AddLedgerRepoFlag adds --repo to a verb that acts on no repository but
// reads the ledger, which with the location "github" lives in one.
func AddLedgerRepoFlag(c *cobra.Command, r *RepoFlag, what string) {
	c.Flags().StringVarP((*string)(r), "repo", "R", "", "with --ledger github: the repository whose ledger "+what+" (default $GH_REPO, else $GITHUB_REPOSITORY)")
}

// OrEnv resolves the repository from --repo, GH_REPO, GITHUB_REPOSITORY,
// in any form gh takes (see repoRef), as OWNER/NAME.
func (r RepoFlag) OrEnv(getenv func(string) string) (string, error) {
	for _, s := range []string{string(r), getenv("GH_REPO"), getenv("GITHUB_REPOSITORY")} {
		if strings.TrimSpace(s) != "" {
			return repoRef(s, getenv("GITHUB_API_URL"))
		}
	}
	return "", Usagef("no repository: %s", WordsFor(getenv).Set(effect.Option{Name: "repo", Value: "OWNER/NAME"}))
}

// TaskFlag is --task: the unit of work.
type TaskFlag string

// AddTaskFlag adds --task, the unit of work.
func AddTaskFlag(c *cobra.Command, t *TaskFlag) {
	c.Flags().StringVar((*string)(t), "task", "", "task id: the unit of work (default $GHONCE_TASK)")
}

// OrEnv resolves the task from --task, GHONCE_TASK, else inside GitHub
// Actions the task derived from the run (reported on errOut).
func (t TaskFlag) OrEnv(getenv func(string) string, errOut io.Writer) (string, error) {
	s := string(t)
	if s == "" {
		s = getenv("GHONCE_TASK")
	}
	if s == "" {
		var err error
		if s, err = ActionsTask(getenv, errOut); err != nil {
			return "", err
		}
	}
	if strings.TrimSpace(s) == "" {
		return "", Usagef("no task: %s (an id that names the work, never a time or a random value)", WordsFor(getenv).Set(effect.Option{Name: "task", Value: "ID"}))
	}
	return s, nil
}

// StepFlag is --step: the step within the task.
type StepFlag string

// AddStepFlag adds --step; def says in the help what a verb does without
// it ("" for the acting verbs: their kind's default step).
func AddStepFlag(c *cobra.Command, s *StepFlag, def string) {
	if def == "" {
		def = "default: the kind's own, e.g. pr-create"
	}
	c.Flags().StringVar((*string)(s), "step", "", "step within the task ("+def+")")
}

// Or is the step, def when --step is not given.
func (s StepFlag) Or(def string) string {
	if s != "" {
		return string(s)
	}
	return def
}

// AddJSONFlag adds --json, one JSON object on stdout whatever the outcome.
func AddJSONFlag(c *cobra.Command, b *bool) {
	c.Flags().BoolVar(b, "json", false, "print one JSON object on stdout, whatever the outcome")
}

// EngineFlags are how the engine waits and what it trusts: --wait,
// --settle, --trust-ledger. A verb that registers only some of them runs
// the others at their defaults (NewEngineFlags).
type EngineFlags struct {
	Wait, Settle time.Duration // 0 (or less): not at all
	TrustLedger  bool
}

const defaultWait = 30 * time.Second

// NewEngineFlags are the engine flags at their defaults.
func NewEngineFlags() EngineFlags {
	return EngineFlags{Wait: defaultWait, Settle: reconcile.DefaultSettle}
}

// AddWaitFlag adds --wait, how long to wait for another process on the same key.
func AddWaitFlag(c *cobra.Command, d *time.Duration) {
	c.Flags().DurationVar(d, "wait", defaultWait, "how long to wait for another process working on the same key")
}

// AddSettleFlag adds --settle (GHONCE_SETTLE: SettleDefault).
func AddSettleFlag(c *cobra.Command, d *time.Duration) {
	c.Flags().DurationVar(d, "settle", reconcile.DefaultSettle, FlagSays("settle"))
}

// SettleDefault makes GHONCE_SETTLE the default of c's --settle, when c
// reads one and it was not given: one variable sets it for the CLI, the
// MCP server and the gh shim alike. A bad value is a usage error.
func SettleDefault(c *cobra.Command, getenv func(string) string) error {
	fl := c.LocalFlags().Lookup("settle")
	if fl == nil || fl.Changed {
		return nil
	}
	d, err := SettleFromEnv(getenv, -1)
	if err != nil || d < 0 {
		return err
	}
	return fl.Value.Set(d.String())
}

// OnChangeDefault makes GHONCE_ON_CHANGE the default of c's --on-change,
// when c reads one and it was not given: one variable sets it for the CLI,
// the gh shim and the MCP server alike. A bad value is a usage error.
func OnChangeDefault(c *cobra.Command, getenv func(string) string) error {
	fl := c.LocalFlags().Lookup("on-change")
	if fl == nil || fl.Changed {
		return nil
	}
	v, err := OnChangeFromEnv(getenv)
	if err != nil || v == "" {
		return err
	}
	return fl.Value.Set(v)
}

// OnChangeFromEnv is GHONCE_ON_CHANGE, checked; "" when unset.
func OnChangeFromEnv(getenv func(string) string) (string, error) {
	v := strings.TrimSpace(getenv("GHONCE_ON_CHANGE"))
	switch v {
	case "", reconcile.OnChangeAuto, reconcile.OnChangeWarn, reconcile.OnChangeFail, reconcile.OnChangeUpdate:
		return v, nil
	}
	return "", Usagef("GHONCE_ON_CHANGE=%q: want auto, warn, fail or update", v)
}

// AddTrustLedgerFlag adds --trust-ledger.
func AddTrustLedgerFlag(c *cobra.Command, b *bool) {
	c.Flags().BoolVar(b, "trust-ledger", false, FlagSays("trust-ledger"))
}

// GitHubFlags say who ghonce is on GitHub beyond the token: --trust-author
// and the GitHub App's flags.
type GitHubFlags struct {
	TrustAuthors []string
	App          AppFlags
}

// AddGitHubFlags adds --trust-author and the GitHub App's flags.
func AddGitHubFlags(c *cobra.Command, g *GitHubFlags) {
	addTrustFlag(c, &g.TrustAuthors)
	addAppFlags(c, &g.App)
}

func addTrustFlag(c *cobra.Command, logins *[]string) {
	c.Flags().StringArrayVar(logins, "trust-author", nil, "also count artifacts by this login as ours (repeatable), e.g. my-app[bot] (default $GHONCE_TRUST_AUTHOR)")
}

// TrustFromEnv is GHONCE_TRUST_AUTHOR: logins separated by commas or
// spaces, the default of --trust-author, and the gh shim's (gh has no
// such flag).
func TrustFromEnv(getenv func(string) string) []string {
	return strings.FieldsFunc(getenv("GHONCE_TRUST_AUTHOR"), func(r rune) bool { return r == ',' || unicode.IsSpace(r) })
}

// TrustDefault makes GHONCE_TRUST_AUTHOR the default of c's --trust-author,
// when c reads one and it was not given.
func TrustDefault(c *cobra.Command, getenv func(string) string) error {
	fl := c.LocalFlags().Lookup("trust-author")
	if fl == nil || fl.Changed {
		return nil
	}
	for _, login := range TrustFromEnv(getenv) {
		if err := fl.Value.Set(login); err != nil {
			return err
		}
	}
	return nil
}

// FilterHelp tells the ledger verbs' users where their filters come from.
const FilterHelp = `
Only --repo and --task narrow it. GH_REPO, GITHUB_REPOSITORY and GHONCE_TASK
name the action an acting verb performs; they never narrow a view of the
ledger, which would hide entries without a word (a guarded command's entry
has no repository, and GitHub Actions sets GITHUB_REPOSITORY on every run).
With --ledger github (the repository's own ledger) --repo chooses the
repository whose ledger is read, and every entry in it is shown.
`

// FilterFlags are --repo and --task of the ledger verbs (status,
// reconcile, labels prune): they narrow a view of the ledger, from the
// flags only (see FilterHelp).
type FilterFlags struct {
	Repo RepoFlag
	Task TaskFlag
}

// AddFilterFlags adds --repo and --task with what they mean here: neither
// has a default from the environment.
func AddFilterFlags(c *cobra.Command, f *FilterFlags) {
	c.Flags().StringVarP((*string)(&f.Repo), "repo", "R", "", "only entries of this repository OWNER/NAME")
	c.Flags().StringVar((*string)(&f.Task), "task", "", "only entries of this task")
}

// Filter is the entry filter the flags give.
func (f FilterFlags) Filter(getenv func(string) string) (reconcile.Filter, error) {
	repo := string(f.Repo)
	if strings.TrimSpace(repo) != "" {
		var err error
		if repo, err = repoRef(repo, getenv("GITHUB_API_URL")); err != nil {
			return reconcile.Filter{}, err
		}
	}
	task := string(f.Task)
	if task != "" {
		// The one rule for ids: " T-1" and "T-1\n" narrow to T-1, as the
		// ledger stores it; "T-1\nT-2" is a usage error.
		if err := taskkey.CheckID("task", task); err != nil {
			return reconcile.Filter{}, Usage(effect.Named(err, func(string) string { return "--task" }))
		}
		task = taskkey.CleanID(task)
	}
	return reconcile.Filter{Repo: repo, Task: task}, nil
}

// ActFlags are what every acting verb reads (exec all but --repo,
// --trust-ledger and the GitHub flags, which it has no use for).
type ActFlags struct {
	Ledger LedgerFlag
	Repo   RepoFlag
	Task   TaskFlag
	Step   StepFlag
	JSON   bool
	Engine EngineFlags
	GitHub GitHubFlags
}

// AddActFlags adds the flags every acting verb reads (ActFlags).
func AddActFlags(c *cobra.Command, a *ActFlags) {
	AddLedgerFlag(c, &a.Ledger)
	AddRepoFlag(c, &a.Repo)
	AddTaskFlag(c, &a.Task)
	AddStepFlag(c, &a.Step, "")
	AddJSONFlag(c, &a.JSON)
	AddWaitFlag(c, &a.Engine.Wait)
	AddSettleFlag(c, &a.Engine.Settle)
	AddTrustLedgerFlag(c, &a.Engine.TrustLedger)
	AddGitHubFlags(c, &a.GitHub)
}

// Wrappers pass the shared flags to every call (--repo to `ghonce exec`,
// --json to `ghonce demo`), and earlier releases took them before the verb
// too (`ghonce --json pr create`). So the root holds one more copy of each
// flag AddActFlags adds (--ledger, --repo/-R, --task, --step, --json,
// --wait, --settle, --trust-ledger, --trust-author, --app-id,
// --app-private-key-file, --app-installation-id), hidden: a verb that reads
// one defines its own, which takes the value wherever it is on the command
// line; a verb that does not inherits the root's, which parses it as the
// verb that reads it would (a bad value is still a usage error), and
// WarnIgnored says on stderr that it does nothing.
func AddWrapperFlags(root *cobra.Command) {
	scratch := &cobra.Command{}
	AddActFlags(scratch, &ActFlags{})
	scratch.Flags().VisitAll(func(fl *pflag.Flag) { fl.Hidden = true })
	root.PersistentFlags().AddFlagSet(scratch.Flags())
}

// WarnIgnored says, for each flag given to c that is root's hidden copy
// (c does not read it), that it has no effect.
func WarnIgnored(root, c *cobra.Command, w io.Writer) {
	c.Flags().Visit(func(fl *pflag.Flag) {
		if root.PersistentFlags().Lookup(fl.Name) == fl {
			fmt.Fprintf(w, "ghonce: --%s has no effect on '%s'; ignored\n", fl.Name, c.CommandPath())
		}
	})
}

// TakesJSON reports whether c prints JSON with --json: it has a --json of
// its own. A usage error before any verb was found (c the root, a noun, or
// nil) does too.
func TakesJSON(c *cobra.Command) bool {
	return c == nil || c.HasSubCommands() || c.LocalFlags().Lookup("json") != nil
}

// JSONGiven reports whether --json was given to c (its own, or root's
// hidden copy).
func JSONGiven(c *cobra.Command) bool {
	if c == nil {
		return false
	}
	fl := c.Flags().Lookup("json")
	return fl != nil && fl.Value.String() == "true"
}

//go:embed flags.txt
var flagsFile string

// FlagSays is the help flags.txt gives a flag that needs more than a line.
var FlagSays = human.Texts(flagsFile)

// SettleFromEnv is GHONCE_SETTLE, a Go duration ("0" waits not at all), as
// the default of --settle; def when it is unset.
func SettleFromEnv(getenv func(string) string, def time.Duration) (time.Duration, error) {
	v := strings.TrimSpace(getenv("GHONCE_SETTLE"))
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, Usagef("GHONCE_SETTLE=%q is not a duration: want e.g. 15s, 500ms or 0 (no wait)", v)
	}
	return d, nil
}

// ParseAge parses --older-than: 30d, 2w, or a Go duration (12h, 90m).
func ParseAge(s string) (time.Duration, error) {
	unit := map[byte]time.Duration{'d': 24 * time.Hour, 'w': 7 * 24 * time.Hour}
	if n := len(s); n > 1 {
		if u, ok := unit[s[n-1]]; ok {
			v, err := strconv.ParseFloat(s[:n-1], 64)
			if err == nil && v > 0 {
				return time.Duration(v * float64(u)), nil
			}
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("invalid --older-than %q: want a positive age such as 30d, 2w, 12h or 90m", strings.TrimSpace(s))
	}
	return d, nil
}
