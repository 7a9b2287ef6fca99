package reliability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ghonce/ghonce/fixtures"
)

// latencies are the fake's answer delays the randomised loop draws from.
var latencies = []time.Duration{0, 2 * time.Millisecond, 10 * time.Millisecond}

// randomKills is the randomised loop: per kind, trials whose first run is
// killed at a random delay after its start, and whose reruns are killed
// again with probability 1/2 (at most twice), then rerun until exit 0.
// With sh the trials share that ledger on separate machines (randomKind),
// and draw from other streams than the SQLite loop's, as reproducible.
func (m *matrix) randomKills(ctx context.Context, seed int64, sh *sharedLedger) ([]*row, []string, error) {
	randomKinds := kindNames(registered)
	info := make([]string, len(randomKinds))
	var mu sync.Mutex
	rows, err := perKind(ctx, randomKinds, func(k *kind) ([]*row, error) {
		ki := slices.Index(randomKinds, k.name)
		stream := uint64(ki)
		if sh != nil {
			stream += sh.stream
		}
		r, cal, err := m.randomKind(ctx, k, rand.New(rand.NewPCG(uint64(seed), stream)), sh)
		mu.Lock()
		info[ki] = cal
		mu.Unlock()
		if err != nil {
			return nil, err
		}
		return []*row{r}, nil
	})
	return rows, info, err
}

// randomKind runs the loop for k. With sh, every trial uses the shared
// ledger and each run of a trial goes to the next machine.
func (m *matrix) randomKind(ctx context.Context, k *kind, rng *rand.Rand, sh *sharedLedger) (*row, string, error) {
	name, runs := "random-"+k.name, m.prof.randomRuns
	pg := sh != nil
	if pg {
		name, runs = sh.part+"-random-"+k.name, sh.randomRuns
	}
	ledgerAt := func(w *world, file string) string {
		if pg {
			return sh.loc
		}
		return ledgerPath(w, file)
	}
	w, err := m.newWorld(name, fixtures.Options{})
	if err != nil {
		return nil, "", err
	}
	defer w.close()
	start := time.Now()
	// Calibrate: how long an unkilled first run takes at each latency (the
	// median of five; the kill is drawn from zero to that).
	span := make([]time.Duration, len(latencies))
	for li, lat := range latencies {
		w.fake.SetLatency(lat)
		var ds []time.Duration
		for n := range 5 {
			t := &trial{k: k, task: fmt.Sprintf("%sRND-cal-%s-%d-%d", taskPrefix(sh), k.name, li, n)}
			t.ledger = ledgerAt(w, fmt.Sprintf("cal-%d-%d.db", li, n))
			to, err := w.runTrial(ctx, t, func(i int, p *proc) {
				if pg {
					w.onMachine(p, i%pgMachines)
				}
			}, false, 1)
			if err != nil {
				return nil, "", err
			}
			if to.final == nil {
				return nil, "", fmt.Errorf("calibrate %s: exit %d: %s", k.name, to.outs[0].Exit, to.outs[0].Stderr)
			}
			ds = append(ds, to.outs[0].Dur)
		}
		slices.Sort(ds)
		span[li] = ds[len(ds)/2]
	}
	cal := fmt.Sprintf("%s: an unkilled first run takes %s / %s / %s (median) at 0 / 2 / 10 ms latency; kills are drawn from 0 to that, moved halfway toward each first run that ended unkilled",
		k.name, span[0].Round(time.Millisecond), span[1].Round(time.Millisecond), span[2].Round(time.Millisecond))

	r := newRow(k.name, "SIGKILL at a random delay", "")
	if pg {
		r.what += "; " + sh.label
	}
	shared := ledgerAt(w, "shared.db")
	// Trials go on until randomRuns of them had their first run killed (a
	// kill drawn late may find the process already done). The calibration
	// measured a few runs at one moment; on a shared machine whose load
	// drops afterwards, runs get faster and kills drawn from the old span
	// land after the end. So a first run that ends unkilled is a fresh
	// measure of its latency's span: the next draws move toward it, and the
	// count of killed trials does not depend on the machine's load.
	killed, total, recal := 0, 0, 0
	for n := 0; killed < runs && n < 8*runs; n++ {
		li := rng.IntN(len(latencies))
		w.fake.SetLatency(latencies[li])
		t := &trial{k: k, task: fmt.Sprintf("%sRND-%s-%d", taskPrefix(sh), k.name, n), newHeads: k.name == "pr"}
		t.ledger = shared
		if n%2 == 0 {
			t.ledger = ledgerAt(w, fmt.Sprintf("rnd-%d.db", n))
		}
		kills := 0
		to, err := w.runTrial(ctx, t, func(i int, p *proc) {
			if pg {
				w.onMachine(p, i%pgMachines)
			}
			if i == 0 || (i <= 2 && kills < 3 && rng.IntN(2) == 0) {
				kills++
				p.killAt = 1 + time.Duration(rng.Int64N(int64(span[li])))
			}
		}, false, m.prof.maxAttempts)
		if err != nil {
			return nil, "", err
		}
		total++
		if first := to.outs[0]; first.Killed {
			killed++
		} else if first.Dur > 0 && first.Dur < span[li] {
			// Halfway to the new measure: one fast run does not pull
			// every later kill to the start.
			span[li] = (span[li] + first.Dur) / 2
			recal++
		}
		r.add(to)
	}
	if killed < runs {
		r.errorf("only %d of %d trials had their first run killed (kill delays drawn from 0 to %s / %s / %s, re-measured %d times)", killed, total,
			span[0].Round(time.Millisecond), span[1].Round(time.Millisecond), span[2].Round(time.Millisecond), recal)
	}
	r.note(fmt.Sprintf("%d trials, %d with the first run killed", total, killed))
	w.fake.SetLatency(0)
	r.dur = time.Since(start)
	if r.dups != 0 {
		r.errorf("%d duplicate(s)", r.dups)
	}
	if r.person != 0 {
		r.errorf("%d trial(s) needed a person: %s", r.person, r.causeList())
	}
	return r, cal, nil
}

// taskPrefix keeps a shared part's tasks apart from the SQLite loop's (a
// repository ledger lives on in the world's repository).
func taskPrefix(sh *sharedLedger) string {
	if sh == nil {
		return ""
	}
	return strings.ToUpper(sh.part) + "-"
}
