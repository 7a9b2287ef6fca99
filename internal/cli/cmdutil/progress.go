package cmdutil

import (
	"fmt"
	"io"
	"os"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/reconcile"
)

// progress draws a bar on stderr while reconcile settles entries, only
// when stderr is a terminal and there are enough entries to be worth one;
// in a pipe (CI logs, a runner capturing output) it stays silent.
type Progress struct {
	w    io.Writer
	what string
	bar  *progressbar.ProgressBar
}

// minBarEntries is how many entries it takes to draw a bar at all.
const minBarEntries = 20

func NewProgress(w io.Writer, what string) *Progress { return &Progress{w: w, what: what} }

func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (p *Progress) Start(total int) {
	if total < minBarEntries || !IsTerminal(p.w) {
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

func (p *Progress) Settled(reconcile.Settlement) {
	if p.bar != nil {
		_ = p.bar.Add(1)
	}
}

// Finish removes the bar before the summary is printed.
func (p *Progress) Finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// tally counts what a reconcile settled, and what it left attempting.
type Tally struct{ Done, Failed, Left int }

func TallyOf(out []reconcile.Settlement) Tally {
	var t Tally
	for _, s := range out {
		switch s.To {
		case ledger.Done:
			t.Done++
		case ledger.Failed:
			t.Failed++
		default:
			t.Left++
		}
	}
	return t
}

// summarize is reconcile's last line: what was settled and what it cost.
func Summarize(t Tally, c *ghcheck.Client) string {
	done, failed, left := t.Done, t.Failed, t.Left
	msg := fmt.Sprintf("settled %d done, %d failed, %d still attempting", done, failed, left)
	var st ghcheck.Stats
	if c != nil {
		st = c.Stats()
	}
	Plural := "s"
	if st.Requests == 1 {
		Plural = ""
	}
	msg += fmt.Sprintf("; %d GitHub request%s", st.Requests, Plural)
	if st.NotModified > 0 {
		msg += fmt.Sprintf(" (%d answered 304 Not Modified, free)", st.NotModified)
	}
	return msg
}

func OrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
