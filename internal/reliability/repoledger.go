package reliability

import (
	"context"

	"github.com/ghonce/ghonce/fixtures"
)

// The repository-ledger part ("gh"): ghonce on separate machines (each run
// in its own working directory and HOME, nothing shared on disk) whose
// only common ground is the repository, GHONCE_LEDGER=github: the claims
// live in the fake GitHub itself. Its rows stand next to the SQLite rows of
// the kill and race tables.

// ghLabel is the ledger column of the part's rows.
const ghLabel = "the repository (github), separate machines"

// ghPart runs every kill point of every kind and the share-nothing races
// (each racer its own machine) against the repository ledger.
func (m *matrix) ghPart(ctx context.Context, rep *Report) error {
	m.shareLedger(ghLabel, "github")
	kill, err := perKind(ctx, kindOrder, func(k *kind) ([]*row, error) { return m.sharedKillPoints(ctx, k, "gh", ghLabel, "github") })
	if err != nil {
		return err
	}
	var race []*row
	for _, rk := range raceKinds {
		w, err := m.newWorld("gh-race-"+rk.name, fixtures.Options{})
		if err != nil {
			return err
		}
		r, err := w.raceRows(ctx, kinds[rk.name], ghLabel, rk.githubUnique)
		w.close()
		if err != nil {
			return err
		}
		race = append(race, r)
	}
	rep.gh = true
	rep.kill = interleave(rep.kill, kill)
	rep.race = interleave(rep.race, race)
	return nil
}
