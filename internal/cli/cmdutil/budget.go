package cmdutil

import (
	"strconv"
	"strings"
	"time"

	"github.com/ghonce/ghonce/ghcheck"
)

// budgetFromEnv reads the write pacing: GHONCE_WRITES_PER_MINUTE (default
// 80) and GHONCE_WRITES_PER_HOUR (default 500), GitHub's secondary limits
// for content creation per token. Pacing is per process: a fleet of agents
// on one token divides them (10 agents: 8 a minute, 50 an hour each).
func budgetFromEnv(getenv func(string) string) (ghcheck.Budget, error) {
	var b ghcheck.Budget
	limits := []ghcheck.Limit{}
	for _, v := range []struct {
		name   string
		def    int
		window time.Duration
	}{{"GHONCE_WRITES_PER_MINUTE", 80, time.Minute}, {"GHONCE_WRITES_PER_HOUR", 500, time.Hour}} {
		n := v.def
		if s := strings.TrimSpace(getenv(v.name)); s != "" {
			var err error
			if n, err = strconv.Atoi(s); err != nil || n <= 0 {
				return b, Usagef("invalid %s %q: want a whole number above 0 (default %d)", v.name, s, v.def)
			}
		}
		limits = append(limits, ghcheck.Limit{N: n, Window: v.window})
	}
	b.Creates = limits
	return b, nil
}
