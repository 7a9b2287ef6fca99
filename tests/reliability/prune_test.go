package reliability

import (
	"context"
	"fmt"
	"strings"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
)

// pruneRows measures what `ghonce labels prune` costs: the key is done,
// its label is pruned, then the ledger is lost too and the agent reruns.
// With the ledger kept a pruned key is skipped (the runs' own confirmation
// checks that); without it, the rerun can only find the artifact by what
// is left on GitHub: a PR by its head branch, or among the newest PRs by
// its marker; an issue by nothing (its label was how it was found). These
// are findings: the duplicates are the price of a clean label list.
func (m *matrix) pruneRows(ctx context.Context, w *world, k *kind, runs int) ([]*row, error) {
	type variant struct {
		what             string
		newHeads         bool
		between          int // other PRs opened before the rerun
		note             string
		wantNoDuplicates bool
	}
	var vs []variant
	switch k.name {
	case "pr":
		vs = []variant{
			{what: "label pruned, ledger lost; rerun with the same head", note: "found again by its head branch and marker", wantNoDuplicates: true},
			{what: "label pruned, ledger lost; rerun with a new head", newHeads: true, note: fmt.Sprintf("found again among the %d newest PRs by its marker", ghcheck.RecentPRs), wantNoDuplicates: true},
			{what: fmt.Sprintf("label pruned, ledger lost; rerun with a new head, %d other PRs opened before it", ghcheck.RecentPRs), newHeads: true, between: ghcheck.RecentPRs,
				note: "README, Labels: with the label pruned and the ledger lost, a PR whose head changed is found among the newest PRs only"},
		}
	case "issue":
		vs = []variant{{what: "label pruned, ledger lost; rerun", note: "README, Labels: ghonce finds an issue by its key label; pruned, and with the ledger lost too, the rerun files a second issue"}}
	default:
		return nil, nil
	}
	var rows []*row
	for vi, v := range vs {
		r := newRow(k.name, v.what, "deleted after the prune")
		for n := 0; n < runs; n++ {
			t := &trial{k: k, task: fmt.Sprintf("PRUNE-%s-%d-%d", k.name, vi, n), newHeads: v.newHeads}
			t.ledger = ledgerPath(w, fmt.Sprintf("prune-%s-%d-%d.db", k.name, vi, n))
			to := trialOut{}
			mark, _ := w.counts()
			first, err := w.run(ctx, proc{args: t.fullArgs(t.k.args(w, t, 0))})
			if err != nil {
				return nil, err
			}
			to.procs++
			if first.Exit != 0 {
				r.errorf("%s: first run: exit %d: %s", t.task, first.Exit, cause(first.Stderr))
				continue
			}
			// Prune as a maintainer would, with the real command; 1ms: the
			// entry was done before this process started.
			pr, err := w.run(ctx, proc{args: []string{"labels", "prune", "--older-than", "1ms", "--repo", owner + "/" + repo, "--ledger", t.ledger}})
			if err != nil {
				return nil, err
			}
			to.procs++
			if pr.Exit != 0 || !strings.Contains(pr.Stdout, taskkey.Label(t.key())) {
				r.errorf("%s: labels prune: exit %d, stdout %q: %s", t.task, pr.Exit, pr.Stdout, cause(pr.Stderr))
				continue
			}
			for j := range v.between {
				w.fake.SeedPR(owner, repo, "someone", fixtures.SeedPR{Title: fmt.Sprintf("Someone's change %d", j), Head: fmt.Sprintf("someone/%s-%d", slug(t.task), j)})
			}
			if err := removeLedger(t.ledger); err != nil {
				return nil, err
			}
			again, err := w.run(ctx, proc{args: t.fullArgs(t.k.args(w, t, 1))})
			if err != nil {
				return nil, err
			}
			to.procs++
			to.attempts = 2
			to.final = again
			switch {
			case again.Exit == failure.ExitSameOrAnother && facts(again) != nil:
				again.Res, to.facts = facts(again), true // the agent stops at the facts
			case again.Exit != 0:
				to.person = fmt.Sprintf("exit %d: %s", again.Exit, cause(again.Stderr))
			}
			to.dups = max(t.k.count(w, t, w.commitsSince(mark))-1, 0)
			r.add(to)
		}
		r.finding = !v.wantNoDuplicates
		if v.wantNoDuplicates && r.dups != 0 {
			r.errorf("%d duplicate(s)", r.dups)
		}
		r.note(v.note)
		rows = append(rows, r)
	}
	return rows, nil
}
