package cmdutil

// What ghonce does differently inside a GitHub Actions job and when it
// authenticates as a GitHub App. The verbs call these with one line each;
// the logic lives in internal/actions and internal/appauth.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/actions"
	"github.com/ghonce/ghonce/internal/appauth"
	"github.com/ghonce/ghonce/outcome"
)

// AppFlags say which GitHub App to authenticate as.
type AppFlags struct {
	id, keyFile, installation string
}

func addAppFlags(c *cobra.Command, a *AppFlags) {
	pf := c.Flags()
	pf.StringVar(&a.id, "app-id", "", "authenticate as the GitHub App with this App ID (default $GHONCE_APP_ID); its SLUG[bot] counts as ours")
	pf.StringVar(&a.keyFile, "app-private-key-file", "", "the App's private key (.pem) (default $GHONCE_APP_PRIVATE_KEY_FILE, or the PEM text in $GHONCE_APP_PRIVATE_KEY)")
	pf.StringVar(&a.installation, "app-installation-id", "", "the App's installation (default $GHONCE_APP_INSTALLATION_ID, else the installation on --repo)")
}

// ActionsTask is the task derived from the runner when neither --task nor
// GHONCE_TASK is given inside GitHub Actions ("" outside), printed so the
// log shows which task a run used.
func ActionsTask(getenv func(string) string, errOut io.Writer) (string, error) {
	if _, ok := actions.Detect(getenv); !ok {
		return "", nil
	}
	task, why, err := actions.DefaultTask(getenv, os.ReadFile)
	if err != nil {
		return "", Usagef("%w: %s", err, WordsFor(getenv).Set(effect.Option{Name: "task", Value: "ID"}))
	}
	if errOut != nil {
		fmt.Fprintf(errOut, "ghonce: task %s (from the %s; set the task yourself in matrix jobs or when one job makes several of the same kind)\n", task, why)
	}
	return task, nil
}

// githubOptions authenticate with the token, or as a GitHub App when one is
// configured; inside Actions, github-actions[bot] counts as ours when the
// token cannot read /user (the job's GITHUB_TOKEN).
func (f *Factory) githubOptions(ctx context.Context, who GitHubFlags, repo RepoFlag) (ghcheck.Options, error) {
	tel := f.Telemetry(false)
	opts := ghcheck.Options{BaseURL: f.IO.Getenv("GITHUB_API_URL"), TrustedAuthors: who.TrustAuthors, UserAgent: "ghonce", Logf: f.Logf,
		Metrics: tel.Metrics, Tracer: tel.Tracer}
	var err error
	if opts.Budget, err = budgetFromEnv(f.IO.Getenv); err != nil {
		return opts, err
	}
	if f.IO.Sleep != nil { // a test's clock: the pacer waits on it
		opts.Budget.Now, opts.Budget.Sleep = f.IO.Now, f.IO.Sleep
	}
	app, err := f.GitHubApp(who.App, repo)
	if err != nil {
		return opts, err
	}
	if app == nil {
		if opts.Token, err = f.Token(); err != nil {
			return opts, err
		}
		if actions.AssumeActionsBot(f.IO.Getenv, opts.Token) {
			opts.InstallationAuthors = []string{actions.ActionsBot}
		}
		return opts, nil
	}
	// Before anything is recorded: a wrong app id, an unknown key, an app
	// not installed or a clock GitHub refuses stops the run here.
	if err := app.Prepare(ctx); err != nil {
		return opts, err
	}
	bot, err := app.Bot(ctx)
	if err != nil {
		return opts, err
	}
	opts.TrustedAuthors = append(slices.Clip(opts.TrustedAuthors), bot)
	opts.TokenSource = app.TokenSource(ctx)
	fmt.Fprintf(f.IO.Err, "ghonce: authenticated as GitHub App %s; artifacts by %s count as ours\n", strings.TrimSuffix(bot, "[bot]"), bot)
	return opts, nil
}

// GitHubApp is the GitHub App the flags a or the environment configure,
// nil when none is; repo (--repo, else the environment's) finds its
// installation when none is given.
func (f *Factory) GitHubApp(a AppFlags, repo RepoFlag) (*appauth.App, error) {
	env, w := f.IO.Getenv, f.words()
	id := FirstOf(a.id, env("GHONCE_APP_ID"))
	if id == "" {
		return nil, nil
	}
	appID, err := strconv.ParseInt(strings.TrimSpace(id), 10, 64)
	if err != nil || appID <= 0 {
		return nil, Usagef("invalid GitHub App id %q: want the numeric App ID from the app's settings page (%s)", id, w.Name(effect.Option{Name: "app-id"}))
	}
	var key []byte
	switch file := FirstOf(a.keyFile, env("GHONCE_APP_PRIVATE_KEY_FILE")); {
	case file != "":
		if key, err = os.ReadFile(file); err != nil {
			return nil, Usagef("read GitHub App private key: %v: check %s", err, w.Name(effect.Option{Name: "app-private-key"}))
		}
	case env("GHONCE_APP_PRIVATE_KEY") != "":
		key = []byte(env("GHONCE_APP_PRIVATE_KEY"))
	default:
		return nil, Usagef("GitHub App %d has no private key: %s", appID, w.Set(effect.Option{Name: "app-private-key"}))
	}
	var inst int64
	if s := FirstOf(a.installation, env("GHONCE_APP_INSTALLATION_ID")); s != "" {
		if inst, err = strconv.ParseInt(strings.TrimSpace(s), 10, 64); err != nil || inst <= 0 {
			return nil, Usagef("invalid GitHub App installation id %q: want a number (%s)", s, w.Name(effect.Option{Name: "app-installation-id"}))
		}
	}
	cfg := appauth.Config{AppID: appID, PrivateKey: key, InstallationID: inst, BaseURL: env("GITHUB_API_URL"), Now: f.IO.Now, Minted: f.mintedToken}
	if inst == 0 {
		repo, err := repo.OrEnv(env)
		if err != nil {
			return nil, Usagef("no installation for GitHub App %d and no repository to find it in: %s, or %s", appID, w.Set(effect.Option{Name: "app-installation-id"}), w.Set(effect.Option{Name: "repo", Value: "OWNER/NAME"}))
		}
		r, err := ParseRepo(repo)
		if err != nil {
			return nil, err
		}
		cfg.Owner, cfg.Repo = r.Owner, r.Name
	}
	app, err := appauth.New(cfg)
	if errors.Is(err, appauth.ErrBadKey) {
		return nil, Usage(err)
	}
	return app, err
}

// mintedToken keeps a token the App minted out of every output and, inside
// GitHub Actions, asks the runner to mask it in the job's log before it is
// used. The gh shim does not ask: its output goes to whoever called gh (an
// agent reading it, not the runner), and the request would show the token
// to them.
func (f *Factory) mintedToken(tok string) {
	f.minted.Add(tok)
	if _, ok := actions.Detect(f.IO.Getenv); ok && f.Say == nil {
		fmt.Fprintln(f.IO.Err, actions.Mask(tok))
	}
}

// FirstOf is the first of ss that is not empty, else "".
func FirstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// reportToActions writes a successful action's step outputs and job
// summary line when running inside GitHub Actions.
func (f *Factory) reportToActions(r *outcome.Result) error {
	env, ok := actions.Detect(f.IO.Getenv)
	if !ok {
		return nil
	}
	res := actions.Result{
		Kind: r.Kind, Key: r.Key, Task: r.Task, Step: r.Step, Outcome: string(r.Outcome),
		Number: r.Number, URL: r.URL, SHA: r.SHA, Ref: r.Ref, PayloadChanged: r.PayloadChanged, Unrecorded: r.Attempts <= 1,
		ArtifactState: r.ArtifactState, RunAttempt: env.RunAttempt,
	}
	if err := actions.WriteOutputs(env.Output, res.Outputs()); err != nil {
		return err
	}
	return actions.AppendSummary(env.Summary, res.SummaryLine())
}

// AnnotateForActions reports a failed run as a workflow command (::error::
// or ::warning:: with the hint to re-run) and a job-summary line, in w
// (the words of the front that ran) and scrubbed of secrets (the run's:
// RunSecrets), when running inside GitHub Actions.
func AnnotateForActions(sys IO, code int, err error, w effect.Words, secrets []string) {
	env, ok := actions.Detect(sys.Getenv)
	if !ok || code == failure.ExitOK || err == nil {
		return
	}
	msg := failure.Say(err, w)
	var se *SilentError
	if errors.As(err, &se) {
		msg = map[int]string{
			failure.ExitUnconfirmed: "some entries could not be settled: GitHub could not answer, or another process holds them; the log above names them.",
			failure.ExitStale:       "ledger entries have been attempting longer than " + WordsFor(sys.Getenv).Name(effect.Option{Name: "stale"}) + ": a person is needed; run `ghonce status` to see them, then `ghonce resolve KEY --done` or `--retry`.",
			failure.ExitDuplicates:  "audit found open duplicates (in the job summary): `ghonce audit --apply` settles this token's own; label one `ghonce-audit:keep` to keep both.",
		}[code]
		if msg == "" {
			msg = fmt.Sprintf("ghonce exited %d; see the log above.", code)
		}
	}
	fmt.Fprintln(sys.Err, actions.Annotate(code, msg, secrets))
	line := fmt.Sprintf("- ghonce **failed** (exit %d): %s", code, strings.ReplaceAll(actions.Scrub(msg, secrets), "\n", " "))
	if err := actions.AppendSummary(env.Summary, line); err != nil {
		fmt.Fprintln(sys.Err, "ghonce: "+err.Error())
	}
}

// EnvSecrets are the secrets a run reads from its environment, which no
// output may show: GitHub tokens, the App's key, the ledger's password,
// the MCP server's bearer token.
func EnvSecrets(getenv func(string) string) []string {
	return []string{getenv("GH_TOKEN"), getenv("GITHUB_TOKEN"), getenv("GITHUB_PERSONAL_ACCESS_TOKEN"), getenv("GHONCE_APP_PRIVATE_KEY"),
		getenv("PGPASSWORD"), getenv(actions.JobTokenEnv), getenv("GHONCE_MCP_AUTH_TOKEN")}
}

// RunSecrets are EnvSecrets and the installation tokens this run minted.
func (f *Factory) RunSecrets() []string {
	return append(EnvSecrets(f.IO.Getenv), f.minted.Values()...)
}

// warn tells the user of a run that succeeded with a warning: a line on
// stderr, or inside GitHub Actions a ::warning:: annotation, which the
// run's page shows (a plain line is seen only by whoever opens the log),
// its advice in the action's inputs' words when the ghonce action runs
// this process ("on-change: update", not "--on-change update").
func (f *Factory) warn(msg string) {
	if _, ok := actions.Detect(f.IO.Getenv); ok {
		fmt.Fprintln(f.IO.Err, actions.Warn(msg, f.RunSecrets()))
		return
	}
	fmt.Fprintln(f.IO.Err, "ghonce: warning: "+msg)
}
