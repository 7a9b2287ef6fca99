package reliability

import (
	"strings"
	"testing"
)

// A machine without PID namespaces (not root, not Linux) skips the part,
// and the report says so where a reader looks: the summary and the part's
// own section, with the reason.
func TestReportSaysThePIDNamespacePartWasSkipped(t *testing.T) {
	why := "`unshare --pid --fork --mount-proc` with a chosen PID failed (exit status 1: unshare: unshare failed: Operation not permitted); it needs root (CAP_SYS_ADMIN)"
	rep := &Report{cfg: Config{Profile: profiles["short"]}, nsSkipped: why}
	md := rep.Markdown()
	for _, want := range []string{
		"| another PID namespace | **skipped: " + why + "** |",
		"## Another PID namespace",
		"**Skipped: " + why + ".**",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// A failed expectation names its part, its row and the seed before the
// reason: the last lines of a failed `make reliability-short` say which
// row failed, why, and how to rerun it alone.
func TestFailuresNamePartRowSeedAndReason(t *testing.T) {
	r := newRow("issue", "SIGKILL at a random delay", "")
	r.errorf("only 3 of 40 trials had their first run killed")
	a := &auditRow{what: "another author's marker"}
	a.errorf("1 false positive(s)")
	rep := &Report{cfg: Config{Profile: profiles["short"], Seed: 42}, random: []*row{r}, audit: []*auditRow{a}}
	got := rep.Failures()
	want := []string{
		`part random, row "issue / SIGKILL at a random delay / ", seed 42: only 3 of 40 trials had their first run killed`,
		`part audit, row "audit --apply / another author's marker", seed 42: 1 false positive(s)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Failures() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
