package cli

import (
	"fmt"
	"io"

	"github.com/schollz/progressbar/v3"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
)

// progress draws a bar on stderr while reconcile settles entries, only
// when stderr is a terminal and there are enough entries to be worth one;
// in a pipe (CI logs, a runner capturing output) it stays silent.
type progress struct {
	w    io.Writer
	what string
	bar  *progressbar.ProgressBar
}

// minBarEntries is how many entries it takes to draw a bar at all.
const minBarEntries = 20

func (p *progress) Start(total int) {
	if total < minBarEntries || !cmdutil.IsTerminal(p.w) {
		return
	}
	p.bar = progressbar.NewOptions(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription("ghonce: "+p.what),
		progressbar.OptionShowCount(),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100_000_000), // redraw at most every 100 ms
		progressbar.OptionClearOnFinish(),
	)
}

func (p *progress) Settled(outcome.Settlement) {
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

// Finish removes the bar before the summary is printed.
func (p *progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// tally counts what a reconcile settled, and what it left attempting.
type tally struct{ done, failed, left int }

func tallyOf(out []outcome.Settlement) tally {
	var t tally
	for _, s := range out {
		switch s.To {
		case ledger.Done:
			t.done++
		case ledger.Failed:
			t.failed++
		default:
			t.left++
		}
	}
	return t
}

// summarize is reconcile's last line: what was settled and what it cost.
func summarize(t tally, c *ghcheck.Client) string {
	var st ghcheck.Stats
	if c != nil {
		st = c.Stats()
	}
	msg := fmt.Sprintf("settled %d done, %d failed, %d still attempting; %d GitHub %s",
		t.done, t.failed, t.left, st.Requests, cmdutil.Plural(int(st.Requests), "request", "requests"))
	if st.NotModified > 0 {
		msg += fmt.Sprintf(" (%d answered 304 Not Modified, free)", st.NotModified)
	}
	return msg
}
