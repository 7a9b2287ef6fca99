package ghcheck

import (
	"net/http"
	"sync/atomic"
	"time"
)

// githubClock is what this client knows of GitHub's clock: the Date header
// of its latest response less this machine's time at its arrival. A
// comment look-up sends since= on GitHub's clock (SinceOnGitHub), so a
// machine (or a ledger) whose clock is ahead of GitHub's does not skip a
// comment it made.
type githubClock struct {
	known  atomic.Bool
	offset atomic.Int64 // GitHub's time minus ours, nanoseconds
	now    func() time.Time
}

// observe reads the Date header of resp. Date has whole seconds: the
// offset is known to within a second, which the caller's margin covers.
func (g *githubClock) observe(resp *http.Response) {
	if resp == nil {
		return
	}
	d, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		return
	}
	g.offset.Store(int64(d.Sub(g.now())))
	g.known.Store(true)
}

// ClockOffset returns how far GitHub's clock is ahead of this machine's
// (negative: behind), from the Date header of the latest response, and
// whether any response has told it yet.
func (c *Client) ClockOffset() (time.Duration, bool) {
	if !c.clock.known.Load() {
		return 0, false
	}
	return time.Duration(c.clock.offset.Load()), true
}

// onGitHub converts t, a time on this machine's clock, to GitHub's clock
// when a response has told it (unchanged otherwise).
func (c *Client) onGitHub(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	off, _ := c.ClockOffset()
	return t.Add(off)
}
