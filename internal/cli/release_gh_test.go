package cli

import (
	"strings"
	"testing"
)

// gh release create through the shim makes the release once per (task,
// step); a second run is skipped. What the kind does not carry (assets,
// generated notes) is not dropped silently.
func TestGhReleaseCreateOnce(t *testing.T) {
	w := newGhCLIWorld(t)
	for i := range 2 {
		o := w.gh("", nil, "release", "create", "v1.0.0", "-R", testRepo, "-t", "One", "-n", "Notes.", "--draft")
		if o.code != 0 || !strings.Contains(o.stdout, "/releases/tag/") {
			t.Fatalf("run %d: exit %d, stdout %q, stderr %q", i+1, o.code, o.stdout, o.stderr)
		}
	}
	if rs := w.fake.Releases(testOwner, testName); len(rs) != 1 || !rs[0].Draft || rs[0].Name != "One" {
		t.Fatalf("releases %+v, want one draft", rs)
	}
	for _, args := range [][]string{
		{"release", "create", "v2", "-R", testRepo, "dist.tgz"},
		{"release", "create", "v2", "-R", testRepo, "--generate-notes"},
	} {
		o := w.gh("", nil, args...)
		if o.code == 0 {
			t.Errorf("gh %s: exit 0 (stdout %q): the kind carries no assets or generated notes", strings.Join(args, " "), o.stdout)
		}
	}
	if n := len(w.fake.Releases(testOwner, testName)); n != 1 {
		t.Fatalf("%d releases, want still one", n)
	}
}
