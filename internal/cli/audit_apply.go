package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/ledger/store"
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
// of them is sent.
func auditActions(repo string, g audit.Group, d audit.Artifact) ([]*reconcile.Prepared, error) {
	var out []*reconcile.Prepared
	for _, a := range auditSpecs(repo, g, d) {
		p, err := reconcile.Prepare(a)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func auditSpecs(repo string, g audit.Group, d audit.Artifact) []reconcile.Action {
	act := func(what string, spec reconcile.Spec) reconcile.Action {
		return reconcile.Action{Task: auditTask, Step: auditStep(g.Kind, g.Keep, what), Repo: repo, Spec: spec}
	}
	switch g.Kind {
	case audit.KindIssue:
		return []reconcile.Action{act("link", reconcile.Comment{Number: d.Number, Body: linkBody(g)}), act("close", reconcile.Close{Number: d.Number, Reason: "duplicate"})}
	case audit.KindPR:
		return []reconcile.Action{act("link", reconcile.Comment{Number: d.Number, Body: linkBody(g)}), act("close", reconcile.Close{Number: d.Number, PR: true})}
	case audit.KindComment:
		return []reconcile.Action{act("delete", reconcile.DeleteComment{ID: d.ID, Number: d.Thread})}
	case audit.KindBranch:
		return []reconcile.Action{act("delete", reconcile.DeleteBranch{Name: d.Name, SHA: d.SHA})}
	}
	return nil
}

// adoptSpec describes a kept artifact that carries a key as its kind's
// description, the payload a run of its task would have stored.
func adoptSpec(repo string, g audit.Group) reconcile.Spec {
	l := g.KeepListed
	body := l.Body
	if _, ok := taskkey.ParseMarker(body); ok {
		_, body, _ = strings.Cut(body, "\n")
	}
	var labels []string
	for _, name := range l.Labels {
		if !strings.HasPrefix(name, "ghonce:") {
			labels = append(labels, name)
		}
	}
	switch g.Kind {
	case audit.KindIssue:
		return reconcile.Issue{Title: l.Title, Body: body, Labels: labels}
	case audit.KindPR:
		head := l.Head
		if owner, _, _ := strings.Cut(repo, "/"); l.HeadOwner != "" && !strings.EqualFold(l.HeadOwner, owner) {
			head = l.HeadOwner + ":" + l.Head // a fork's branch, as --head names it
		}
		return reconcile.PR{Base: l.Base, Head: head, Title: l.Title, Body: body, Labels: labels}
	case audit.KindComment:
		return reconcile.Comment{Number: l.Number, Body: body}
	}
	return nil
}

// applyActions performs the planned writes through the engine, one group
// at a time, and adopts each kept artifact's key. It returns how many
// writes failed; each failure is reported on stderr and in its action.
func applyActions(ctx context.Context, opts *auditOptions, gh *ghcheck.Client, r ghcheck.Repo, rep *audit.Report, actions []auditAction) (failed int, err error) {
	f := opts.f
	l, err := f.openLedger(ctx, opts.Ledger, store.CreateForAction)
	if err != nil {
		return 0, err
	}
	defer l.Close()
	gh.UseLoginCache(reconcile.LoginCache(l))
	eng := f.engine(l, gh, f.sys.Err, opts.Engine)
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
			if spec := adoptSpec(repo, g); spec != nil {
				art := effect.Artifact{Number: g.Keep.Number, ID: g.Keep.ID, URL: g.Keep.URL}
				if _, err := eng.Adopt(ctx, reconcile.AdoptParams{Key: g.Keep.Key, Repo: repo, Spec: spec, Artifact: art, Why: "adopted by ghonce audit: kept from a duplicate group"}); err != nil {
					fmt.Fprintf(f.sys.Err, "ghonce: audit: adopt %s %s: %v\n", g.Kind, g.Keep.Ref(g.Kind), err)
					failed++
				}
			}
		}
		for _, d := range g.Duplicates {
			i := slices.IndexFunc(actions, func(a auditAction) bool { return a.Kind == g.Kind && a.Target == d.Ref(g.Kind) })
			if i < 0 || actions[i].Skipped != "" {
				continue // closed already, or left alone
			}
			a := &actions[i]
			var outcomes []string
			prepared, err := auditActions(repo, g, d)
			if err != nil {
				failed++
				a.Outcome = "failed: " + err.Error()
				fmt.Fprintf(f.sys.Err, "ghonce: audit: %s: %v\n", a.Target, err)
			}
			for _, p := range prepared {
				kind := p.Action().Spec.Kind()
				res, err := eng.Do(ctx, p)
				if err != nil {
					failed++
					a.Outcome = "failed: " + err.Error()
					fmt.Fprintf(f.sys.Err, "ghonce: audit: %s %s: %v\n", kind, a.Target, err)
					break
				}
				outcomes = append(outcomes, kind+" "+string(res.Outcome))
				if res.URL != "" && kind == "comment" {
					a.URL = res.URL
				}
			}
			if !strings.HasPrefix(a.Outcome, "failed") {
				a.Outcome = strings.Join(outcomes, ", ")
				a.settled = true
			}
		}
	}
	return failed, nil
}
