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
