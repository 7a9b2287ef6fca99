package auditcmd

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// auditTask is the task of every write `audit --apply` makes. Each write's
// step names its group by the kept artifact, and its target the duplicate,
// so the key is one per (group, artifact): a second --apply finds every
// key done, and one killed half-way resumes where it stopped.
const auditTask = "ghonce-audit"

func auditStep(kind string, keep audit.Artifact, what string) string {
	return "duplicate-of-" + strings.ReplaceAll(keep.Ref(kind), " ", "-") + "/" + what
}

// linkBody is the comment that tells a person why a duplicate was closed.
func linkBody(g audit.Group) string {
	return fmt.Sprintf("Closing as a duplicate of %s.\n\n`ghonce audit` found %s (evidence: %s). Reopen it if this is wrong; a later audit leaves a reopened one alone.",
		g.Keep.Ref(g.Kind), g.Detail, g.Evidence)
}

// auditActions are the engine actions that settle duplicate d of g, in
// order (a linking comment before a close, so a closed duplicate always
// says why), each prepared: one the engine refuses is refused before any
// of them is sent. guard runs right before the close or the delete.
func auditActions(repo string, g audit.Group, d audit.Artifact, guard reconcile.Guard) ([]*reconcile.Prepared, error) {
	var out []*reconcile.Prepared
	for _, a := range auditSpecs(repo, g, d, guard) {
		p, err := reconcile.Prepare(a)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func auditSpecs(repo string, g audit.Group, d audit.Artifact, guard reconcile.Guard) []reconcile.Action {
	act := func(what string, spec reconcile.Spec) reconcile.Action {
		return reconcile.Action{Task: auditTask, Step: auditStep(g.Kind, g.Keep, what), Repo: repo, Spec: spec}
	}
	rule := audit.Rule(g.Kind)
	switch rule.Settle {
	case "close":
		return []reconcile.Action{act("link", reconcile.Comment{Number: d.Number, Body: linkBody(g)}), act("close", reconcile.Close{Number: d.Number, Reason: "duplicate", Guard: guard})}
	case "close-pr":
		return []reconcile.Action{act("link", reconcile.Comment{Number: d.Number, Body: linkBody(g)}), act("close", reconcile.Close{Number: d.Number, PR: true, Guard: guard})}
	case "delete":
		return []reconcile.Action{act("delete", reconcile.DeleteComment{ID: d.ID, Number: d.Thread, Guard: guard})}
	}
	return nil
}

// adoptSpec describes a kept artifact that carries a key as its kind's
// description, the payload a run of its task would have stored: the
// listing's fields by GitHub's names, which are the kind's (effect.Face).
// Only a kind --apply settles is adopted; nil for another.
func adoptSpec(repo string, g audit.Group) (reconcile.Spec, error) {
	if audit.Rule(g.Kind).Settle == "" {
		return nil, nil
	}
	l := g.KeepListed
	body := l.Body
	if k, ok := taskkey.ParseMarker(body); ok {
		body = taskkey.WithoutMarker(k, body)
	}
	var labels []string
	for _, name := range l.Labels {
		if !strings.HasPrefix(name, "ghonce:") {
			labels = append(labels, name)
		}
	}
	head := l.Head
	if owner, _, _ := strings.Cut(repo, "/"); l.HeadOwner != "" && !strings.EqualFold(l.HeadOwner, owner) {
		head = l.HeadOwner + ":" + l.Head // a fork's branch, as --head names it
	}
	payload, _ := json.Marshal(map[string]any{"number": l.Number, "title": l.Title, "body": body, "labels": labels, "base": l.Base, "head": head})
	spec, err := kinds.DecodeValue(g.Kind, payload)
	s, _ := spec.(reconcile.Spec)
	return s, err
}

// ledgerArtifacts is what a ledger recorded in one repository: the key of
// each issue, pull request and comment of a done entry, and the entries
// by artifact (to point them elsewhere once --apply removed theirs).
type ledgerArtifacts struct {
	byArtifact map[string][]*ledger.Entry
}

// artifactKey names an artifact of kind: by its number when the audit
// names it by one (audit.Numbered), else by its id.
func artifactKey(kind string, number int, id int64) string {
	if audit.Numbered(kind) {
		return fmt.Sprintf("%s #%d", kind, number)
	}
	return fmt.Sprintf("%s %d", kind, id)
}

func readLedgerArtifacts(ctx context.Context, l ledger.Ledger, repo string) (*ledgerArtifacts, error) {
	es, err := l.List(ctx, ledger.ListParams{Repo: repo, Status: ledger.Done})
	if err != nil {
		return nil, fmt.Errorf("list the ledger's entries for %s: %w", repo, err)
	}
	la := &ledgerArtifacts{byArtifact: map[string][]*ledger.Entry{}}
	for _, e := range es {
		// The audit's kinds are the engine's, by name.
		if audit.Rule(e.Kind).Listing != "" && (audit.Numbered(e.Kind) && e.Ref.Number != 0 || !audit.Numbered(e.Kind) && e.Ref.ID != 0) {
			k := artifactKey(e.Kind, e.Ref.Number, e.Ref.ID)
			la.byArtifact[k] = append(la.byArtifact[k], e)
		}
	}
	return la, nil
}

// keyOf is audit.Options.Recorded: the key of the first entry that
// recorded the artifact ("" for none, or with no ledger).
func (la *ledgerArtifacts) keyOf(kind string, number int, id int64) string {
	if la == nil {
		return ""
	}
	for _, e := range la.byArtifact[artifactKey(kind, number, id)] {
		if e.Task != auditTask {
			return e.Key
		}
	}
	return ""
}

// repoint records every entry whose artifact --apply closed or deleted
// (d) as the kept one's instead, so a rerun of its task replays the kept
// artifact, never the one removed. Only an entry whose key d carries (its
// marker or label) is confirmed as d's: any other is left as it is.
func (la *ledgerArtifacts) repoint(ctx context.Context, l ledger.Ledger, g audit.Group, d audit.Artifact) error {
	if la == nil {
		return nil
	}
	carried := audit.Carried(d.Listed)
	for _, e := range la.byArtifact[artifactKey(g.Kind, d.Number, d.ID)] {
		if e.Task == auditTask || !slices.Contains(carried, e.Key) {
			continue
		}
		k := g.Keep
		_, err := l.Resolve(ctx, ledger.ResolveParams{Key: e.Key, Status: ledger.Done, Ref: ledger.Ref{Number: cmp.Or(k.Number, k.Thread), ID: k.ID, URL: k.URL},
			Who: "ghonce audit", Note: fmt.Sprintf("its artifact %s was settled as a duplicate of %s: the kept one is this key's now", d.Ref(g.Kind), k.Ref(g.Kind))})
		if err != nil {
			return fmt.Errorf("point the ledger entry %s at %s: %w", e.Key, k.Ref(g.Kind), err)
		}
	}
	return nil
}

// linkOnce makes sure a linking comment this audit just posted is the
// only one: another audit with a ledger of its own may have looked, found
// none and posted its own at the same moment. Both look again after
// posting; the newer finds the older (comment ids grow, and the thread's
// listing is consistent), deletes its own and records the older as its
// key's, so exactly one stays whatever the interleaving.
func linkOnce(ctx context.Context, l ledger.Ledger, gh *ghcheck.Client, r ghcheck.Repo, number int, key string, res *outcome.Result) (*outcome.Result, error) {
	first := gh.FindComment(ctx, r, number, key)
	if first.State != effect.Found || first.Artifact.ID == 0 || first.Artifact.ID >= res.ID {
		return res, nil // ours is the first, or the look failed: keep it
	}
	if _, err := gh.DeleteComment(ctx, r, res.ID); err != nil {
		return nil, fmt.Errorf("delete the second linking comment %d (another audit posted %d first): %w", res.ID, first.Artifact.ID, err)
	}
	if _, err := l.Resolve(ctx, ledger.ResolveParams{Key: key, Status: ledger.Done, Ref: ledger.Ref{ID: first.Artifact.ID, URL: first.Artifact.URL},
		Who: "ghonce audit", Note: fmt.Sprintf("another audit posted this linking comment first (%d): this one's (%d) was deleted", first.Artifact.ID, res.ID)}); err != nil {
		return nil, fmt.Errorf("record the linking comment %d: %w", first.Artifact.ID, err)
	}
	out := *res
	out.Outcome, out.ID, out.URL = outcome.Found, first.Artifact.ID, first.Artifact.URL
	return &out, nil
}

// leftAlone is a guard's refusal: the pair changed since the listing.
type leftAlone struct{ why string }

func (e *leftAlone) Error() string { return "left alone: " + e.why }

// recheckGuard is the last check before the close or delete of duplicate
// d: it waits for the write pacer first, then reads d and the kept one
// again (audit.Recheck), so no wait comes between that read and the
// write.
func recheckGuard(gh *ghcheck.Client, r ghcheck.Repo, g audit.Group, d audit.Artifact) reconcile.Guard {
	return func(ctx context.Context) (context.Context, error) {
		ctx, err := gh.Pace(ctx)
		if err != nil {
			return ctx, err
		}
		why, err := audit.Recheck(ctx, gh, r, g, d)
		if err == nil && why != "" {
			err = &leftAlone{why: why}
		}
		return ctx, err
	}
}

// outcomeWord names what a write did, for a person: a deletion as a
// deletion.
func outcomeWord(kind string, o outcome.Outcome) string {
	verb := map[string]string{"comment": "linked", "close": "closed", "comment-delete": "deleted"}[kind]
	switch {
	case verb == "":
		return kind + " " + string(o)
	case o == outcome.Created:
		return verb
	case o == outcome.Found || o == outcome.Skipped:
		return verb + " already"
	}
	return verb + " (" + string(o) + ")"
}

// applyActions performs the planned writes through the engine, one group
// at a time, and adopts each kept artifact's key. Right before each write
// it reads the duplicate and the kept one again (audit.Recheck) and leaves
// the pair alone, saying why, if either changed. It returns how many
// writes failed; each failure is reported on stderr and in its action.
func applyActions(ctx context.Context, opts *auditOptions, l *store.Opened, gh *ghcheck.Client, r ghcheck.Repo, rep *audit.Report, actions []auditAction, la *ledgerArtifacts) (failed int, err error) {
	f := opts.f
	cmdutil.CacheLogin(gh, l)
	eng := f.Engine(l, gh, opts.Engine)
	repo := r.String()
	// An --apply killed half-way left entries attempting, some for a
	// duplicate it had closed or deleted (which this audit no longer
	// lists): settle them first, as 'ghonce reconcile' would (found: done;
	// absent: failed, so this run acts again), reading only.
	if _, err := eng.Reconcile(ctx, reconcile.Filter{Repo: repo, Task: auditTask}); err != nil {
		return 0, err
	}
	for _, g := range rep.Groups {
		if g.Keep.Key != "" && g.Keep.Ours {
			spec, err := adoptSpec(repo, g)
			if err == nil && spec != nil {
				art := effect.Artifact{Number: g.Keep.Number, ID: g.Keep.ID, URL: g.Keep.URL}
				_, err = eng.Adopt(ctx, reconcile.AdoptParams{Key: g.Keep.Key, Repo: repo, Spec: spec, Artifact: art, Why: "adopted by ghonce audit: kept from a duplicate group"})
			}
			if err != nil {
				fmt.Fprintf(f.IO.Err, "ghonce: audit: adopt %s %s: %v\n", g.Kind, g.Keep.Ref(g.Kind), err)
				failed++
			}
		}
		for _, d := range g.Duplicates {
			i := slices.IndexFunc(actions, func(a auditAction) bool { return a.Kind == g.Kind && a.Target == d.Ref(g.Kind) })
			if i < 0 || actions[i].Skipped != "" {
				continue // closed already, or left alone
			}
			a := &actions[i]
			var outcomes []string
			prepared, err := auditActions(repo, g, d, recheckGuard(gh, r, g, d))
			if err != nil {
				failed++
				a.Outcome = "failed: " + err.Error()
				fmt.Fprintf(f.IO.Err, "ghonce: audit: %s: %v\n", a.Target, err)
			}
			stale := ""
			for _, p := range prepared {
				kind := p.Action().Spec.Kind()
				var why string
				if kind == "comment" { // the link; the close and the delete recheck in their guard
					why, err = audit.Recheck(ctx, gh, r, g, d)
				}
				if err == nil && why != "" {
					stale = why
					break
				}
				var res *outcome.Result
				if err == nil {
					res, err = eng.Do(ctx, p)
				}
				if la := (*leftAlone)(nil); errors.As(err, &la) {
					stale = la.why
					break
				}
				if err != nil {
					failed++
					a.Outcome = "failed: " + err.Error()
					fmt.Fprintf(f.IO.Err, "ghonce: audit: %s %s: %v\n", kind, a.Target, err)
					break
				}
				if kind == "comment" && res.Outcome == outcome.Created {
					if res, err = linkOnce(ctx, l, gh, r, d.Number, p.Key(), res); err != nil {
						failed++
						a.Outcome = "failed: " + err.Error()
						fmt.Fprintf(f.IO.Err, "ghonce: audit: %s %s: %v\n", kind, a.Target, err)
						break
					}
				}
				outcomes = append(outcomes, outcomeWord(kind, res.Outcome))
				if res.URL != "" && kind == "comment" {
					a.URL = res.URL
				}
			}
			switch {
			case strings.HasPrefix(a.Outcome, "failed"):
			case stale != "":
				if a.Outcome = "left alone: " + stale; len(outcomes) > 0 {
					a.Outcome = strings.Join(outcomes, ", ") + ", then " + a.Outcome
				}
				fmt.Fprintf(f.IO.Err, "ghonce: audit: left %s alone: %s\n", a.Target, stale)
			default:
				a.Outcome = strings.Join(outcomes, ", ")
				a.settled = true
				if err := la.repoint(ctx, l, g, d); err != nil {
					failed++
					fmt.Fprintf(f.IO.Err, "ghonce: audit: %v\n", err)
				}
			}
		}
	}
	return failed, nil
}
