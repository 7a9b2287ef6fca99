package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/outcome"
)

// row is one line of a table: a number of trials of one kind under one
// condition, and what they left behind.
type row struct {
	kind, what, ledger string
	runs               int // trials
	kills              int // processes killed
	procs              int // processes run, kills and confirmations included
	dups               int // artifacts beyond one per key
	lost               int // final exit 0 without its artifact
	person             int // trials that never reached exit 0
	exit3              int // runs that exited 3 (needs a rerun) on the way
	maxReruns          int // most runs after the first one trial needed
	causes             map[string]int
	notes              []string
	errs               []string // violated expectations (the test fails)
	finding            bool     // measured, not held to 0 duplicates
	dur                time.Duration
	// races
	exits     map[string]int
	dupRounds int
	flags     map[string]int // what kind.inspect noticed, counted
	// bad input
	exitText, requests, files string
	// faults: measured waits by what they measure
	waits map[string][]time.Duration

	mu sync.Mutex
}

func newRow(kind, what, ledger string) *row {
	return &row{kind: kind, what: what, ledger: ledger, causes: map[string]int{}}
}

func (r *row) errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) < 20 {
		r.errs = append(r.errs, fmt.Sprintf(format, args...))
	}
}

func (r *row) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.notes {
		if n == s {
			return
		}
	}
	r.notes = append(r.notes, s)
}

func (r *row) add(to trialOut) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs++
	r.kills += to.kills
	r.procs += to.procs
	r.dups += to.dups
	r.exit3 += to.exit3
	r.maxReruns = max(r.maxReruns, to.attempts-1)
	if to.lost != "" {
		r.lost++
		if len(r.errs) < 20 {
			r.errs = append(r.errs, "lost: "+to.lost)
		}
	}
	if to.person != "" {
		r.person++
		r.causes[to.person]++
	}
	for _, n := range []string{to.note, map[bool]string{true: factsNote}[to.facts]} {
		if n != "" {
			if r.flags == nil {
				r.flags = map[string]int{}
			}
			r.flags[n]++
		}
	}
	if to.confirm != "" && len(r.errs) < 20 {
		r.errs = append(r.errs, "after success: "+to.confirm)
	}
}

func (r *row) causeList() string { return countList(r.causes) }

// personCell is a table's "needed a person" cell: the count, then the
// causes ghonce printed.
func (r *row) personCell() string {
	if c := r.causeList(); c != "" {
		return fmt.Sprintf("%d (%s)", r.person, c)
	}
	return fmt.Sprint(r.person)
}

func countList(m map[string]int) string {
	type kv struct {
		k string
		n int
	}
	var l []kv
	for k, n := range m {
		l = append(l, kv{k, n})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].n > l[j].n || l[i].n == l[j].n && l[i].k < l[j].k })
	var s []string
	for i, e := range l {
		if i == 6 {
			s = append(s, fmt.Sprintf("%d other causes", len(l)-i))
			break
		}
		s = append(s, fmt.Sprintf("%d× %s", e.n, e.k))
	}
	return strings.Join(s, "; ")
}

// trialOut is what one trial left behind.
type trialOut struct {
	attempts int // runs until the exit 0, the killed ones included
	procs    int
	kills    int
	exit3    int
	dups     int
	lost     string // why the final success is not backed by an artifact
	person   string // the cause, when no run reached exit 0
	confirm  string // what went wrong in the run after success
	note     string // what kind.inspect noticed
	facts    bool   // the final run was the facts (exit 7), and the agent stopped there
	final    *out
	outs     []*out
}

// plan says how attempt i of a trial runs: which kill it carries. It may
// change p freely.
type plan func(i int, p *proc)

// runTrial runs t's attempts until one exits 0 (at most maxAttempts), as a
// restarted agent reruns the same command after any failure; loseLedger
// deletes the ledger after every kill. Then it counts the artifacts for the
// key, checks the one reported, and runs the command once more: a done key
// must be skipped without a write.
func (w *world) runTrial(ctx context.Context, t *trial, pl plan, loseLedger bool, maxAttempts int) (trialOut, error) {
	var to trialOut
	t.commitMark, _ = w.counts()
	last := ""
	for i := 0; i < maxAttempts && to.final == nil; i++ {
		p := proc{args: t.fullArgs(t.k.args(w, t, i))}
		if pl != nil {
			pl(i, &p)
		}
		o, err := w.run(ctx, p)
		if err != nil {
			return to, err
		}
		to.attempts++
		to.procs++
		to.outs = append(to.outs, o)
		if t.after != nil {
			if err := t.after(i, o); err != nil {
				return to, err
			}
		}
		switch {
		case o.Killed:
			to.kills++
			if loseLedger {
				if err := removeLedger(t.ledger); err != nil {
					return to, err
				}
			}
		case o.Exit == 0:
			to.final = o
		case o.Exit == failure.ExitSameOrAnother && facts(o) != nil:
			// Every run of a trial is one act: its agent, given the facts
			// (its key made an artifact from another text), stops there
			// and takes that artifact (docs/design/same-act.md).
			o.Res, to.final, to.facts = facts(o), o, true
		default:
			if o.Exit == 3 {
				to.exit3++
			}
			last = fmt.Sprintf("exit %d: %s", o.Exit, cause(o.Stderr))
			if o.Exit == 3 && strings.Contains(o.Stderr, "ghonce resolve") {
				// ghonce says a person must decide: rerunning will not help.
				to.person = last
			}
		}
		if to.person != "" {
			break
		}
	}
	if to.final == nil && to.person == "" {
		to.person = last
		if last == "" {
			to.person = "killed on every run"
		}
	}
	if to.final == nil && t.k.name == "exec-nocheck" {
		// The person looks at the outside world and tells ghonce.
		if err := w.resolve(ctx, t, &to); err != nil {
			return to, err
		}
	}
	n := t.k.count(w, t, w.commitsSince(t.commitMark))
	to.dups = max(n-1, 0)
	if to.final == nil {
		return to, nil
	}
	r := to.final.Res
	switch {
	case r == nil:
		to.lost = "exit 0 without a JSON result: " + firstLine(to.final.Stdout)
	case r.Key != t.key():
		to.lost = fmt.Sprintf("reported key %s, want %s", r.Key, t.key())
	case n == 0:
		to.lost = fmt.Sprintf("exit 0 (%s) but no artifact exists for %s", r.Outcome, r.Key)
	default:
		if err := t.k.verify(w, t, r); err != nil {
			to.lost = err.Error()
		}
	}
	if to.lost != "" {
		return to, nil
	}
	if t.k.inspect != nil {
		to.note = t.k.inspect(w, t, r)
	}
	// Done is durable: the same command again (the one that succeeded) is
	// skipped, with the same artifact and no write.
	_, writes := w.counts()
	o, err := w.run(ctx, proc{args: t.fullArgs(t.k.args(w, t, to.attempts-1))})
	if err != nil {
		return to, err
	}
	to.procs++
	ws := w.writesSince(writes)
	if to.facts && o.Exit == failure.ExitSameOrAnother {
		o.Res = facts(o)
	}
	switch {
	case to.facts && (o.Exit != failure.ExitSameOrAnother || o.Res == nil || o.Res.Key != r.Key):
		to.confirm = fmt.Sprintf("exit %d after the facts, want them again: %s", o.Exit, cause(o.Stderr))
	case to.facts:
		if o.Res.Number != r.Number || o.Res.ID != r.ID || len(ws) > 0 {
			to.confirm = fmt.Sprintf("the facts again name %d/%d (were %d/%d), %d write(s)", o.Res.Number, o.Res.ID, r.Number, r.ID, len(ws))
		}
	case o.Exit != 0 || o.Res == nil:
		to.confirm = fmt.Sprintf("exit %d: %s", o.Exit, cause(o.Stderr))
	case o.Res.Outcome != "skipped":
		to.confirm = "outcome " + string(o.Res.Outcome) + ", want skipped"
	case o.Res.Number != r.Number || o.Res.ID != r.ID || o.Res.SHA != r.SHA:
		to.confirm = fmt.Sprintf("skipped with another artifact (%d/%d/%s, was %d/%d/%s)", o.Res.Number, o.Res.ID, o.Res.SHA, r.Number, r.ID, r.SHA)
	case len(ws) > 0:
		to.confirm = fmt.Sprintf("%d write request(s) for a done key", len(ws))
	}
	return to, nil
}

// resolve is the person a guarded command without --check asks for: they
// see whether the effect happened and run `ghonce resolve KEY --done` or
// `--retry`, then the agent's command again.
func (w *world) resolve(ctx context.Context, t *trial, to *trialOut) error {
	how := "--retry"
	if w.fx.count(t.key()) > 0 {
		how = "--done"
	}
	o, err := w.run(ctx, proc{args: []string{"resolve", t.key(), how, "--note", "checked the service by hand", "--ledger", t.ledger}})
	if err != nil {
		return err
	}
	to.procs++
	if o.Exit != 0 {
		to.confirm = fmt.Sprintf("resolve %s: exit %d: %s", how, o.Exit, cause(o.Stderr))
		return nil
	}
	o, err = w.run(ctx, proc{args: t.fullArgs(t.k.args(w, t, to.attempts))})
	if err != nil {
		return err
	}
	to.procs++
	to.attempts++
	to.outs = append(to.outs, o)
	if o.Exit == 0 {
		to.final = o
	} else {
		to.confirm = fmt.Sprintf("after resolve %s: exit %d: %s", how, o.Exit, cause(o.Stderr))
	}
	return nil
}

var (
	keyRE    = regexp.MustCompile(`gk1_[a-z2-7]{32}`)
	numRE    = regexp.MustCompile(`\b\d+\b`)
	durRE    = regexp.MustCompile(`\b\d+(\.\d+)?(h|m|s|ms|µs)(\d+(\.\d+)?(h|m|s|ms|µs))*\b`)
	pathRE   = regexp.MustCompile(`(^|[\s"'(=])/[^\s:;,"')]+`)
	portRE   = regexp.MustCompile(`127\.0\.0\.1:\d+`)
	spacesRE = regexp.MustCompile(`\s+`)
)

// cause is the message of a failed run, with keys, numbers and paths
// folded so that the same cause counts once.
func cause(stderr string) string {
	var msg string
	for _, line := range strings.Split(stderr, "\n") {
		l := strings.TrimSpace(line)
		switch {
		case l == "", strings.HasPrefix(l, "Run 'ghonce --help'"):
			continue
		case strings.HasPrefix(l, "ghonce: taking over"), strings.HasPrefix(l, "ghonce: found "), strings.HasPrefix(l, "ghonce: key "),
			strings.Contains(l, "is in progress in process"):
			continue
		}
		if msg == "" || strings.HasPrefix(l, "ghonce: ") {
			msg = l
		}
	}
	msg = strings.TrimPrefix(msg, "ghonce: ")
	msg = keyRE.ReplaceAllString(msg, "KEY")
	msg = strings.Replace(msg, "unconfirmed KEY: could not tell whether it exists: ", "unconfirmed: ", 1)
	msg = portRE.ReplaceAllString(msg, "FAKE")
	msg = pathRE.ReplaceAllString(msg, "${1}/…")
	msg = durRE.ReplaceAllString(msg, "D")
	msg = numRE.ReplaceAllString(msg, "N")
	msg = spacesRE.ReplaceAllString(msg, " ")
	if len(msg) > 160 {
		msg = msg[:160] + "…"
	}
	if msg == "" {
		msg = "(no message)"
	}
	return msg
}

// factsNote is a row's note for trials whose agent stopped at the facts.
const factsNote = "a reworded rerun nothing proved a retry (a run before it answered, or the ledger was lost) got the facts, exit 7; its agent stopped there, with the artifact they name"

// facts is the artifact a same_or_another failure (exit 7) names, as a
// result; nil when o printed none.
func facts(o *out) *result {
	for _, line := range strings.Split(o.Stdout, "\n") {
		var f failure.Failure
		if json.Unmarshal([]byte(strings.TrimSpace(line)), &f) == nil && f.Key != "" && f.Existing != nil {
			return &result{Key: f.Key, Number: f.Existing.Number, ID: f.Existing.ID, URL: f.Existing.URL, Outcome: outcome.Skipped}
		}
	}
	return nil
}
