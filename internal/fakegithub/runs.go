package fakegithub

import (
	"net/http"
	"time"
)

func init() {
	handle(map[string]repoEndpoint{
		"GET /actions/runs/{id}/attempts/{n}": (*Server).getRunAttempt,
	})
}

// runAttempt is one attempt of an Actions run, as SeedRunAttempt made it.
type runAttempt struct {
	id              int64
	attempt         int
	started, update time.Time
}

// runStore holds a repository's seeded run attempts.
type runStore struct{ all []*runAttempt }

// runAttemptJSON is the part of GitHub's workflow run a client reads of an
// attempt.
type runAttemptJSON struct {
	ID           int64     `json:"id"`
	RunAttempt   int       `json:"run_attempt"`
	Status       string    `json:"status"`
	RunStartedAt time.Time `json:"run_started_at"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// SeedRunAttempt records that attempt n of the Actions run id of
// owner/repo ran from started to ended, as GET
// /repos/{owner}/{repo}/actions/runs/{id}/attempts/{n} answers it.
func (s *Server) SeedRunAttempt(owner, name string, id int64, n int, started, ended time.Time) {
	s.withRepo(owner, name, func(rp *repo) {
		st := storeOf[runStore](rp)
		st.all = append(st.all, &runAttempt{id: id, attempt: n, started: started, update: ended})
	})
}

// getRunAttempt serves GET /repos/{owner}/{repo}/actions/runs/{id}/attempts/{n}.
func (s *Server) getRunAttempt(c *call, rp *repo) *reply {
	id, ok := intParam(c, "id")
	n, ok2 := intParam(c, "n")
	for _, a := range storeOf[runStore](rp).all {
		if ok && ok2 && a.id == id && int64(a.attempt) == n {
			// GitHub's timestamps are whole seconds.
			return jsonReply(http.StatusOK, runAttemptJSON{ID: a.id, RunAttempt: a.attempt, Status: "completed",
				RunStartedAt: a.started.UTC().Truncate(time.Second), UpdatedAt: a.update.UTC().Truncate(time.Second)})
		}
	}
	return notFound()
}
