package reconcile

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/taskkey"
)

// InvalidError is bad input, refused before anything is recorded or sent:
// no description, an empty or malformed task or step, a missing or
// malformed repository, an unknown on-change policy, or a description its kind
// refuses. Its Field names the field at fault by its wire name; a front
// end names it in its own words (effect.Named) and reports it as a usage
// error (the CLI's exit 2); nothing needs settling.
type InvalidError = effect.InvalidError

// invalid is err as an *InvalidError: as it is when it is one already.
func invalid(err error) error { return once.Invalid(err) }

// empty is the error of a required field left empty.
func empty(field, want string) error {
	return &InvalidError{Field: field, Problem: "is empty", Want: want}
}

// Prepared is an Action validated once, with its key, identity, repository
// and payload derived once. Prepare makes it; Engine.Do takes it. It is
// immutable and may be passed to Do any number of times, from any
// goroutine.
type Prepared struct {
	a       Action // as cleaned
	id      taskkey.Identity
	key     string
	payload []byte // the Spec as the ledger stores it
	hash    string // of payload
	named   bool   // the caller named the step: not the kind's default
	// legacy are the keys the action may have been recorded under before:
	// the id as given before ids were normalised to NFC
	// (taskkey.LegacyKeys), and, for an action that named no step, the
	// kind's former default steps (a comment's "pr-comment"). Empty for
	// most actions.
	legacy []string
}

// Prepare validates a and derives what Do needs from it, without touching
// the ledger or GitHub. Its error is an *InvalidError: bad input that no
// rerun can fix. The kind's validation (Spec.Validate) is the one rule: it
// refuses every shape GitHub's layer (package ghcheck) would refuse before
// sending, so an action Prepare accepts is never refused by ghcheck's
// checks after its intent is recorded.
//
// a.Spec is read once, here: a change to it afterwards (through a pointer
// or a shared slice) is not seen by the key or the payload.
func Prepare(a Action) (*Prepared, error) {
	defaulted := strings.TrimSpace(a.Step) == ""
	a = withDefaultStep(a)
	if d, ok := a.Spec.(interface{ withDefaults() Spec }); ok {
		a.Spec = d.withDefaults() // before the payload: it is what is recorded
	}
	id, err := checkIdentity(a)
	if err != nil {
		return nil, err
	}
	if err := checkOnChange(a.OnChange); err != nil {
		return nil, invalid(err)
	}
	p := &Prepared{id: id, key: taskkey.Key(id), named: !defaulted && !a.StepDerived}
	if a.Repo == "" {
		return nil, empty("repo", fmt.Sprintf("the repository a %s acts on, as OWNER/NAME", id.Kind))
	}
	if a.repo, err = ghcheck.ParseRepo(a.Repo); err != nil {
		return nil, invalid(err)
	}
	if err := a.Spec.Validate(p.key); err != nil {
		return nil, invalid(err)
	}
	if p.payload, p.hash, err = encodeSpec(a.Spec); err != nil {
		return nil, invalid(err)
	}
	p.legacy = taskkey.LegacyKeys(taskkey.Identity{Task: a.Task, Step: a.Step, Kind: id.Kind, Repo: a.Repo, Target: id.Target})
	if f, ok := a.Spec.(interface{ formerDefaultSteps() []string }); ok && defaulted {
		for _, step := range f.formerDefaultSteps() {
			old := id
			old.Step = step
			p.legacy = append(p.legacy, taskkey.Key(old))
		}
	}
	a.Task, a.Step = id.Task, id.Step
	p.a = a
	return p, nil
}

// Key is the action's key: the same task, step, kind, repository and
// target always give the same key.
func (p *Prepared) Key() string { return p.key }

// Action is the action as cleaned: its task and step without surrounding
// white space and in NFC, as the ledger records them.
func (p *Prepared) Action() Action { return p.a }

// KeyOf is the key a has, checking only what the key depends on (a
// description, the task, the step, the repository) and not the rest of the
// description: for a caller that needs the key before the description is
// complete, such as `ghonce key` or a branch whose commit an earlier
// attempt resolved. For every a that Prepare accepts,
// KeyOf(a) equals Prepare(a).Key(). Its error is an *InvalidError.
func KeyOf(a Action) (string, error) {
	a = withDefaultStep(a)
	if a.Spec == nil {
		return "", once.NoSpec
	}
	_, key, err := once.Key(a.Task, a.Step, a.Spec.Kind(), a.Repo, a.Spec.Target())
	return key, err
}

// Complete fills in what a leaves to GitHub's defaults, as GitHub's write
// would and as its key must name it: a file written to no branch goes to
// the repository's default branch (one read, GET /repos/{o}/{r}). A front
// whose caller may leave it out (the go-github transport) calls Complete
// before Prepare; a description that leaves nothing out is returned as it
// is, without a read.
func Complete(ctx context.Context, gh DefaultBrancher, a Action) (Action, error) {
	c, ok := a.Spec.(interface {
		complete(context.Context, DefaultBrancher, ghcheck.Repo) (Spec, error)
	})
	if !ok {
		return a, nil
	}
	r, err := ghcheck.ParseRepo(a.Repo)
	if err != nil {
		return a, invalid(err)
	}
	a.Spec, err = c.complete(ctx, gh, r)
	return a, err
}

// DefaultBrancher names a repository's default branch (ghcheck.Client).
type DefaultBrancher interface {
	DefaultBranch(ctx context.Context, r ghcheck.Repo) (string, error)
}

// aimer is every kind (register requires it): aim is its description
// holding only target (Spec.Target), or the error its Validate gives for
// target, so `ghonce key` refuses a target the acting verbs refuse, in the
// same words (kinds.KeyOfTarget).
type aimer interface {
	aim(target string) (Spec, error)
}

// issueNumber is an issue's or pull request's number written out.
func issueNumber(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, &InvalidError{Field: "number", Problem: fmt.Sprintf("%q is not a number", s), Want: "an issue's or pull request's number"}
	}
	return n, ghcheck.CheckIssueNumber(n)
}

// DefaultStep is the step of an action of spec's kind that names none
// (see DefaultStepper); "" for a kind that has no default.
func DefaultStep(spec Spec) string {
	if d, ok := spec.(DefaultStepper); ok {
		return d.DefaultStep()
	}
	return ""
}

// withDefaultStep is a with its kind's default step when it names none.
func withDefaultStep(a Action) Action {
	if strings.TrimSpace(a.Step) == "" && a.Spec != nil {
		if d := DefaultStep(a.Spec); d != "" {
			a.Step = d
		}
	}
	return a
}

// checkIdentity returns a's identity, cleaned: the ledger keeps the task
// and step the key was derived from, so " T-1" and "T-1\n" are recorded,
// listed and filtered as T-1.
func checkIdentity(a Action) (taskkey.Identity, error) {
	if a.Spec == nil {
		return taskkey.Identity{}, once.NoSpec
	}
	return once.Identity(a.Task, a.Step, a.Spec.Kind(), a.Repo, a.Spec.Target())
}
