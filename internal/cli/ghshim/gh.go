// Package ghshim is ghonce invoked as gh, through `ghonce shim DIR`: it
// guards gh's command lines that create and hands every other to the real
// gh.
package ghshim

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/actions"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/outcome"
)

// ghExitHelp documents how the shim exits (see Main).
const ghExitHelp = `Exit codes as gh: 0 success (created, found or skipped), 4 authentication
required (no token), 1 anything else, including a create ghonce could not
confirm (rerun the same command) and another process holding the same key.
With GHONCE_EXIT_CODES=ghonce: ghonce's own codes (2 usage or no token,
3 unconfirmed, 4 in progress elsewhere, 7 done from another text).`

// Main runs ghonce invoked as gh (argv[0]'s base name). It guards the
// command lines that create: gh pr create, gh issue create, gh issue
// comment and gh pr comment, with gh's flags, environment and inference,
// keyed as `ghonce pr create --task $GHONCE_TASK` would be. Every other
// command line is handed, verbatim, to the real gh (see realGh); so are
// the guarded verbs' --help, --web, --dry-run and --edit-last forms,
// which create nothing. It returns the exit code (ghExitHelp); version
// is the build's, as the factory carries it.
func Main(ctx context.Context, argv []string, sys cmdutil.IO, version string) int {
	args := argv[1:]
	verb, rest, ok := guardedGh(args)
	if !ok {
		// An alias of the user's own (gh alias set ic 'issue create')
		// names a guarded verb once expanded, as the real gh would.
		if exp, isAlias := expandGhAlias(args, sys.Getenv); isAlias {
			verb, rest, ok = guardedGh(exp)
		}
	}
	if !ok {
		return handOff(argv, sys)
	}
	err := ghRun(ctx, verb, rest, argv[0], sys, version)
	if err == nil {
		return failure.ExitOK
	}
	fail := failure.Describe(err, verb, ghWords{})
	fail.Error.Message = actions.Scrub(fail.Error.Message, cmdutil.EnvSecrets(sys.Getenv))
	fmt.Fprintln(sys.Err, "ghonce: "+fail.Error.Message)
	if fail.Key != "" && !strings.Contains(fail.Error.Message, fail.Key) {
		fmt.Fprintln(sys.Err, "ghonce: key "+fail.Key)
	}
	cmdutil.AnnotateForActions(sys, fail.ExitCode, err, ghWords{}, cmdutil.EnvSecrets(sys.Getenv))
	return ghExit(sys.Getenv, fail)
}

// ghExit maps a failure to gh's exit codes, or ghonce's with
// GHONCE_EXIT_CODES=ghonce.
func ghExit(getenv func(string) string, fail failure.Failure) int {
	if getenv("GHONCE_EXIT_CODES") == "ghonce" {
		return fail.ExitCode
	}
	if fail.Error.Kind == failure.Credentials {
		return 4 // gh: authentication required
	}
	return 1
}

// ghVerbs maps every spelling the real gh accepts for a guarded command
// (a kind's reconcile.Face.Gh) to that command: its name and its cobra
// aliases (gh's source: pkg/cmd/issue/create and pkg/cmd/pr/create declare
// Aliases "new"; the comment commands have none); ghKinds maps each
// guarded command to its kind. TestGhVerbsAreTheRealGhs holds the list to
// the installed gh.
var ghVerbs, ghKinds = func() (verbs, kindOf map[string]string) {
	verbs, kindOf = map[string]string{}, map[string]string{}
	for _, k := range kinds.All() {
		f, _ := kinds.FaceOf(k)
		for _, verb := range f.Gh {
			verbs[verb], kindOf[verb] = verb, k
			if noun, ok := strings.CutSuffix(verb, " create"); ok {
				verbs[noun+" new"] = verb
			}
		}
	}
	return verbs, kindOf
}()

// guardedGh returns the verb ("pr create", ...) and its arguments if args
// is a command line the shim guards. It finds the command as gh's cobra
// does: flags may come before the noun or the verb (`gh issue -R o/r new`,
// `gh --repo o/r pr create`), each taking the next word as its value unless
// written --flag=value; those flags are moved behind the verb, where gh
// parses them too.
func guardedGh(args []string) (string, []string, bool) {
	var words, flags []string
	i := 0
	for ; i < len(args) && len(words) < 2; i++ {
		a := args[i]
		switch {
		case a == "--":
			return "", nil, false
		case a == "-h", a == "--help", a == "--version":
			return "", nil, false // cobra's own booleans: gh prints, creates nothing
		case strings.HasPrefix(a, "-") && len(a) > 1:
			flags = append(flags, a)
			if !strings.Contains(a, "=") && (strings.HasPrefix(a, "--") || len(a) == 2) && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			words = append(words, a)
		}
	}
	if len(words) < 2 {
		return "", nil, false
	}
	verb, ok := ghVerbs[words[0]+" "+words[1]]
	if !ok {
		return "", nil, false
	}
	rest := append(flags, args[i:]...)
	for _, a := range rest {
		if a == "--" {
			break
		}
		name, _, _ := strings.Cut(a, "=")
		switch name {
		// They create nothing (help, a browser, a preview) or edit rather
		// than create: the real gh does them.
		case "-h", "--help", "-w", "--web", "--dry-run", "--edit-last", "--delete-last":
			return "", nil, false
		}
	}
	if f, _ := kinds.FaceOf(ghKinds[verb]); f.GhPart && !onlyKindFlags(f, rest) {
		return "", nil, false
	}
	return verb, rest, true
}

// onlyKindFlags reports whether a command line (after the verb) gives
// some of f's fields by their gh flags and no other flag but -R/--repo
// (an edit that only adds labels): any other is the real gh's to run.
func onlyKindFlags(f effect.Face, rest []string) bool {
	flags := map[string]bool{}
	for _, fl := range f.Fields {
		if n := fl.GhFlag(); n != "" {
			flags["--"+n] = true
			flags["-"+fl.Short] = fl.Short != ""
		}
	}
	gives := false
	for i := 0; i < len(rest); i++ {
		name, _, inline := strings.Cut(rest[i], "=")
		switch {
		case rest[i] == "--":
			return gives
		case flags[name], name == "-R", name == "--repo":
			gives = gives || flags[name]
			if !inline {
				i++
			}
		case strings.HasPrefix(rest[i], "-"):
			return false
		}
	}
	return gives
}

// ghFlags is what the shim reads of a guarded command line: the kind's
// fields by their gh flags, and gh's own flags that are no field's.
type ghFlags struct {
	repo                         string
	fill, fillFirst, fillVerbose bool
	// meta is -a, -r and -m: set on the artifact once it is done.
	meta ghcheck.Metadata
	// fields are the kind's fields gh takes as flags, each Flag its gh
	// name.
	fields []*cmdutil.FieldValue
	set    func(name string) bool
}

// ghHook is what a guarded gh command does beyond its kind's fields: gh's
// own flags, and the inference gh makes (the current branch, the default
// branch, --fill).
type ghHook struct {
	flags func(fs *pflag.FlagSet, o *ghFlags)
	// infers are the required fields infer fills when not given; alt
	// and satisfied are what else stands for the required ones.
	infers    []string
	alt       string
	satisfied func(o *ghFlags) bool
	infer     func(ctx context.Context, g *ghCall, p map[string]any) error
}

// ghCall is a guarded command being run, for a hook's inference.
type ghCall struct {
	verb string
	o    *ghFlags
	env  *ghEnv
	f    *cmdutil.Factory
	a    cmdutil.ActFlags
	repo ghcheck.Repo
	sys  cmdutil.IO
}

func (g *ghCall) client(ctx context.Context) (*ghcheck.Client, error) {
	return g.f.GitHub(ctx, g.a.GitHub, g.a.Repo)
}

// metaFlags are gh's -a, -r, -m (and -p, -T, --recover, refused).
func metaFlags(reviewers bool) func(fs *pflag.FlagSet, o *ghFlags) {
	return func(fs *pflag.FlagSet, o *ghFlags) {
		fs.StringSliceVarP(&o.meta.Assignees, "assignee", "a", nil, "")
		if reviewers {
			fs.StringSliceVarP(&o.meta.Reviewers, "reviewer", "r", nil, "")
		}
		fs.StringVarP(&o.meta.Milestone, "milestone", "m", "", "")
		fs.StringSliceP("project", "p", nil, "")
		fs.StringP("template", "T", "", "")
		fs.String("recover", "", "")
	}
}

// ghHooks are the guarded commands' hooks, by verb.
var ghHooks = map[string]ghHook{
	"pr create": {
		flags: func(fs *pflag.FlagSet, o *ghFlags) {
			metaFlags(true)(fs, o)
			fs.BoolVarP(&o.fill, "fill", "f", false, "")
			fs.BoolVar(&o.fillFirst, "fill-first", false, "")
			fs.BoolVar(&o.fillVerbose, "fill-verbose", false, "")
			fs.Bool("no-maintainer-edit", false, "")
		},
		infers:    []string{"head", "base"},
		alt:       " (or `--fill` or `--fill-first` or `--fill-verbose`)",
		satisfied: func(o *ghFlags) bool { return o.fill || o.fillFirst || o.fillVerbose },
		infer:     inferPR,
	},
	"issue create": {flags: metaFlags(false), infer: func(_ context.Context, g *ghCall, _ map[string]any) error {
		if g.sys.OnTerminal(g.sys.Out) {
			fmt.Fprintf(g.sys.Err, "\nCreating issue in %s\n\n", g.repo)
		}
		return nil
	}},
	"issue comment": {flags: commentFlags},
	"pr comment":    {flags: commentFlags},
	"pr review": {infer: func(_ context.Context, _ *ghCall, p map[string]any) error {
		if p["event"] == "" { // gh asks for one on a terminal, and refuses without
			return cmdutil.Usagef("gh pr review: must provide `--approve`, `--comment` or `--request-changes` when not running interactively")
		}
		return nil
	}},
}

// infersPRNumber reports whether verb infers its kind's number, as gh's
// pr commands do: without one, the open pull request of the current
// branch.
func infersPRNumber(verb string, f effect.Face) bool {
	fl, ok := f.Field("number")
	return strings.HasPrefix(verb, "pr ") && ok && fl.Arg != ""
}

func commentFlags(fs *pflag.FlagSet, _ *ghFlags) {
	fs.Bool("create-if-none", false, "")
	fs.Bool("yes", false, "")
}

// refusedGhFlags are gh flags the shim cannot guard; each says why.
var refusedGhFlags = map[string]string{
	"editor":             "opens an editor, which a guarded run cannot wait for: pass --title and --body (or --body-file -)",
	"project":            "is not guarded: add it after, with `gh pr edit URL --add-project` or `gh issue edit URL --add-project` (adding is idempotent)",
	"template":           "is not guarded: pass the text with --body or --body-file",
	"recover":            "is not guarded: pass --title and --body",
	"no-maintainer-edit": "is not guarded: change it after, on the pull request",
	"create-if-none":     "goes with --edit-last, which the real gh runs",
	"yes":                "goes with --delete-last, which the real gh runs",
	"body-file-template": "is not guarded",
}

// parseGh parses args (after the verb) as gh does: the kind's fields by
// their gh names (Field.Gh, else the CLI flag), and the hook's flags.
func parseGh(verb string, args []string) (*ghFlags, []string, error) {
	fs := pflag.NewFlagSet("gh "+verb, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	o := &ghFlags{}
	fs.StringVarP(&o.repo, "repo", "R", "", "")
	fs.BoolP("editor", "e", false, "")
	face, _ := kinds.FaceOf(ghKinds[verb])
	var flags []effect.Field // the positional ones are ghRun's
	for _, fl := range face.Fields {
		if fl.Arg == "" {
			flags = append(flags, fl)
		}
	}
	o.fields, _ = cmdutil.AddFieldFlags(fs, ghKinds[verb], flags, effect.Field.GhFlag)
	if h := ghHooks[verb]; h.flags != nil {
		h.flags(fs, o)
	}
	if err := fs.Parse(args); err != nil {
		return nil, nil, cmdutil.Usage(fmt.Errorf("gh %s: %w", verb, err))
	}
	var refused error
	fs.Visit(func(fl *pflag.Flag) {
		if why, ok := refusedGhFlags[fl.Name]; ok && refused == nil {
			name := "--" + fl.Name
			if fl.Shorthand != "" {
				name = "-" + fl.Shorthand + "/--" + fl.Name
			}
			refused = cmdutil.Usagef("gh %s: %s %s; nothing was created", verb, name, why)
		}
	})
	if refused != nil {
		return nil, nil, refused
	}
	o.set = func(name string) bool { return fs.Changed(name) }
	return o, fs.Args(), nil
}

// field is the value of the kind's field name, nil when gh takes none.
func (o *ghFlags) field(name string) *cmdutil.FieldValue {
	for _, v := range o.fields {
		if v.Field.Name == name {
			return v
		}
	}
	return nil
}

// given reports whether v was given a value.
func (o *ghFlags) given(v *cmdutil.FieldValue) bool {
	switch {
	case v.Switches != nil:
		for _, on := range v.Switches {
			if *on {
				return true
			}
		}
		return false
	case v.Field.File:
		return o.set(v.Field.Flag) || v.File != ""
	case v.Field.List:
		return len(v.Strs) > 0
	case v.Type != nil && v.Type.Kind() == reflect.Bool:
		return true
	}
	return v.Str != ""
}

// ghRun runs a guarded verb: gh's command line after the verb, self being
// argv[0]. Bad input is refused before git, the ledger or GitHub is asked.
func ghRun(ctx context.Context, verb string, args []string, self string, sys cmdutil.IO, version string) error {
	o, rest, err := parseGh(verb, args)
	if err != nil {
		return err
	}
	kind, hook := ghKinds[verb], ghHooks[verb]
	face, _ := kinds.FaceOf(kind)
	if infersPRNumber(verb, face) {
		hook.infers = slices.Concat(hook.infers, []string{"number"})
	}
	if hook.satisfied == nil || !hook.satisfied(o) {
		// gh names every flag it needs when one is missing (`-t x` alone:
		// "must provide `--title` and `--body`"), and so does the shim.
		var required []string
		missing := false
		for _, v := range o.fields {
			if !v.Field.Required || slices.Contains(hook.infers, v.Field.Name) {
				continue
			}
			if v.Field.Arg != "" { // a positional argument is asked for by its hook
				continue
			}
			missing = missing || !o.given(v)
			if v.Switches != nil {
				required = append(required, "`--"+strings.Join(slices.Sorted(maps.Keys(v.Switches)), "` or `--")+"`")
			} else {
				required = append(required, "`--"+v.Field.Flag+"`")
			}
		}
		if missing {
			return cmdutil.Usagef("gh %s: must provide %s%s when not running interactively", verb, strings.Join(required, " and "), hook.alt)
		}
	}
	env := newGhEnv(ctx, sys, self)
	a := cmdutil.ActFlags{Task: cmdutil.TaskFlag(sys.Getenv("GHONCE_TASK")), Step: cmdutil.StepFlag(sys.Getenv("GHONCE_STEP")), Engine: cmdutil.NewEngineFlags()}
	a.GitHub.TrustAuthors = cmdutil.TrustFromEnv(sys.Getenv)
	if a.Engine.Settle, err = cmdutil.SettleFromEnv(sys.Getenv, a.Engine.Settle); err != nil {
		return err
	}
	onChange, err := cmdutil.OnChangeFromEnv(sys.Getenv)
	if err != nil {
		return err
	}
	task, err := a.Task.OrEnv(sys.Getenv, sys.Err)
	switch {
	case err != nil && a.Task == "" && sys.Getenv("GITHUB_ACTIONS") != "true":
		// Never run it unguarded: a rerun would duplicate it.
		return cmdutil.Usagef("gh %s is guarded by ghonce and needs a task: set GHONCE_TASK to the id of the work (the issue, the job), the same on every rerun; nothing was created", verb)
	case err != nil:
		return err
	}
	a.Task = cmdutil.TaskFlag(task) // derived once: runAction does not report it again

	// The positional arguments (a number or a URL, which also names the
	// repository); the target's repository: gh's -R, a URL, GH_REPO,
	// then the git remote.
	positional := map[string]any{}
	var fromURL string
	for _, fl := range face.Fields {
		if fl.Arg == "" {
			continue
		}
		if len(rest) == 0 {
			if !slices.Contains(hook.infers, fl.Name) {
				return cmdutil.Usagef("gh %s: pass the %s or its URL", verb, cmdutil.FirstOf(fl.Help, strings.ToLower(fl.Arg)))
			}
			continue
		}
		positional[fl.Name] = rest[0]
		if t := kinds.FieldTypes(kind)[fl.Name]; t != nil && t.Kind() == reflect.Int {
			var n int
			if n, fromURL, err = parseGhTarget(rest[0]); err != nil {
				return err
			}
			positional[fl.Name] = n
		}
		rest = rest[1:]
	}
	if len(rest) > 0 {
		return cmdutil.Usagef("gh %s: unexpected argument %q", verb, rest[len(rest)-1])
	}
	repo, err := env.repo(cmdutil.FirstOf(o.repo, fromURL))
	if err != nil {
		return err
	}
	a.Repo = cmdutil.RepoFlag(repo.String())
	f := &cmdutil.Factory{IO: env.sys, Version: version, Say: ghWords{}}
	payload, err := cmdutil.GatherPayload(o.set, o.fields, nil, sys, nil, false)
	if err != nil {
		return err
	}
	for k, v := range positional {
		payload[k] = v
	}
	call := &ghCall{verb: verb, o: o, env: env, f: f, a: a, repo: repo, sys: sys}
	if hook.infer != nil {
		if err := hook.infer(ctx, call, payload); err != nil {
			return err
		}
	}
	if infersPRNumber(verb, face) {
		if err := inferPRNumber(ctx, call, payload); err != nil {
			return err
		}
	}
	spec, err := cmdutil.DecodePayload(kind, payload)
	if err != nil {
		return err
	}
	act := cmdutil.ActOptions{Factory: f, Flags: a, Spec: spec, OnChange: onChange, Names: ghName, Words: ghWords{}}
	if !o.meta.Empty() {
		var milestones chan *ghcheck.Milestones
		if o.meta.Milestone != "" {
			// Read beside the look-up and the create: -m then costs no
			// round trip of its own after them.
			act.Before = func(ctx context.Context, c *ghcheck.Client) {
				milestones = make(chan *ghcheck.Milestones, 1)
				go func() { milestones <- c.ReadMilestones(ctx, repo) }()
			}
		}
		act.After = func(ctx context.Context, c *ghcheck.Client, res *outcome.Result) error {
			m := o.meta
			if milestones != nil {
				m.Milestones = <-milestones
			}
			return applyGhMetadata(ctx, c, repo, verb, res, m)
		}
	}
	return cmdutil.RunAction(ctx, act)
}

// inferPR is gh pr create's inference: the head is the current branch,
// the base the default branch, and --fill takes the title and body from
// the commits.
func inferPR(ctx context.Context, g *ghCall, p map[string]any) error {
	head, _ := p["head"].(string)
	base, _ := p["base"].(string)
	var err error
	if head == "" {
		if head, err = g.env.head(g.repo); err != nil {
			return err
		}
	}
	if base == "" {
		c, err := g.client(ctx)
		if err != nil {
			return err
		}
		if base, err = c.DefaultBranch(ctx, g.repo); err != nil {
			return err
		}
	}
	p["head"], p["base"] = head, base
	if o := g.o; o.fill || o.fillFirst || o.fillVerbose {
		title, body, err := g.env.fill(g.repo, base, head, o.fillFirst, o.fillVerbose)
		if err != nil {
			return err
		}
		p["title"] = cmdutil.FirstOf(p["title"].(string), title)
		if !o.given(o.field("body")) {
			p["body"] = body
		}
	}
	draft := ""
	if p["draft"] == true {
		draft = "draft "
	}
	if canPrompt(g.sys) { // as gh: only where it could have asked
		fmt.Fprintf(g.sys.Err, "\nCreating %spull request for %s into %s in %s\n\n", draft, head, base, g.repo)
	}
	return nil
}

// inferPRNumber is gh pr comment's: without a number, the open pull
// request of the current branch.
func inferPRNumber(ctx context.Context, g *ghCall, p map[string]any) error {
	if _, ok := p["number"]; ok {
		return nil
	}
	head, err := g.env.head(g.repo)
	if err != nil {
		return cmdutil.Usagef("gh pr comment: pass the pull request's number or URL, or run it on the pull request's branch")
	}
	c, err := g.client(ctx)
	if err != nil {
		return err
	}
	n, err := c.OpenPRForHead(ctx, g.repo, head)
	if errors.Is(err, ghcheck.ErrNoOpenPR) {
		return cmdutil.Usagef("gh pr comment: no open pull request found for branch %s: pass its number or URL", head)
	}
	p["number"] = n
	return err
}

// ghNames are the fields gh takes under another name than --FIELD, and the
// two the shim reads from the environment.
var ghNames = map[string]string{
	"task":   "GHONCE_TASK",
	"step":   "GHONCE_STEP",
	"body":   "--body (or --body-file)",
	"number": "the issue or pull request number",
}

// ghName is what a guarded gh command calls field.
func ghName(field string) string {
	if n, ok := ghNames[field]; ok {
		return n
	}
	return "--" + field
}

// ghWords says the shim's options: gh's flags (-R), and the settings gh
// has no flag for as the environment variables the shim reads
// (GHONCE_STEP=NAME, GHONCE_TRUST_AUTHOR=LOGIN).
type ghWords struct{ cmdutil.FlagWords }

func (w ghWords) Name(o effect.Option) string {
	if o.Name == "wait" {
		return "" // gh has no such flag, and the shim reads no variable for it
	}
	if !ghEnvOnly[o.Name] {
		return w.FlagWords.Name(o)
	}
	n := "GHONCE_" + strings.ToUpper(strings.ReplaceAll(o.Name, "-", "_"))
	if o.Value != "" {
		n += "=" + o.Value
	}
	return n
}

func (w ghWords) Set(o effect.Option) string {
	if !ghEnvOnly[o.Name] {
		return w.FlagWords.Set(o)
	}
	return "set " + w.Name(o)
}

// ghEnvOnly are the options the shim takes from the environment only.
var ghEnvOnly = map[string]bool{"task": true, "step": true, "ledger": true, "on-change": true, "trust-author": true, "app-id": true, "app-installation-id": true}

// applyGhMetadata sets -a, -r and -m on the artifact res names, which is
// done whether this run made it, found it or skipped it: so a run killed
// between the create and these edits finishes them when rerun. A failure
// leaves the artifact as it is (its URL is already on stdout) and says
// what to fix; a rerun sends only what is still missing.
func applyGhMetadata(ctx context.Context, c *ghcheck.Client, repo ghcheck.Repo, verb string, res *outcome.Result, m ghcheck.Metadata) error {
	if res.Number == 0 {
		return fmt.Errorf("gh %s: the ledger's entry names no number, so its assignees, reviewers and milestone cannot be set: set them with `gh %s edit %s`", verb, strings.Fields(verb)[0], res.URL)
	}
	m.Created = res.Outcome == outcome.Created
	err := c.ApplyMetadata(ctx, repo, res.Number, verb == "pr create", m)
	if err == nil {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is there, but not all of its assignees, reviewers and milestone are set:", res.URL)
	for _, line := range strings.Split(err.Error(), "\n") {
		b.WriteString("\n  " + line)
	}
	b.WriteString("\nfix that and rerun the same command: it creates nothing again and sends only what is missing")
	return &cmdutil.InWords{Msg: b.String(), Err: err}
}

// canPrompt is gh's IOStreams.CanPrompt: standard input and output are
// terminals and GH_PROMPT_DISABLED is unset.
func canPrompt(sys cmdutil.IO) bool {
	return sys.Getenv("GH_PROMPT_DISABLED") == "" && sys.OnTerminal(sys.In) && sys.OnTerminal(sys.Out)
}

// parseGhTarget parses a comment's target: a number, or a pull request or
// issue URL (https://HOST/OWNER/NAME/pull/N), which also names the
// repository.
func parseGhTarget(s string) (int, string, error) {
	if n, err := strconv.Atoi(strings.TrimPrefix(s, "#")); err == nil && n > 0 {
		return n, "", nil
	}
	u, err := url.Parse(s)
	if err == nil && u.Host != "" {
		parts := strings.Split(strings.Trim(u.Path, "/"), "/")
		if len(parts) == 4 && (parts[2] == "pull" || parts[2] == "issues") {
			if n, err := strconv.Atoi(parts[3]); err == nil && n > 0 {
				return n, parts[0] + "/" + parts[1], nil
			}
		}
	}
	return 0, "", cmdutil.Usagef("invalid number or URL %q: want e.g. 42 or https://github.com/OWNER/NAME/pull/42", s)
}

// parseGhRepo parses gh's -R forms: OWNER/NAME, HOST/OWNER/NAME or a URL.
// A host other than host (GH_HOST, else github.com) is refused: the token
// and API root were chosen for host.
func parseGhRepo(s, host string) (ghcheck.Repo, error) {
	t := strings.TrimSuffix(strings.TrimSuffix(s, "/"), ".git")
	named := ""
	if u, err := url.Parse(t); err == nil && u.Host != "" {
		named, t = u.Hostname(), strings.Trim(u.Path, "/")
	} else if parts := strings.Split(t, "/"); len(parts) == 3 {
		named, t = parts[0], parts[1]+"/"+parts[2]
	}
	if named != "" && !strings.EqualFold(named, host) {
		return ghcheck.Repo{}, cmdutil.Usagef("repository %q is on %s, not %s: set GH_HOST=%s (and its token) to act there", s, named, host, named)
	}
	return cmdutil.ParseRepo(t)
}

// errNoRealGh is realGh's error when no gh follows the shim on PATH.
var errNoRealGh = errors.New("no real gh found")
