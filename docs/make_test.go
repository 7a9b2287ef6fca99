package docs_test

import (
	"bytes"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

// sqliteNotice is what the first `make build` (so `make demo`) and
// `make test` on a fresh machine print before minutes of compiling SQLite.
const sqliteNotice = "building go-sqlite3 with cgo the first time"

// The first `make demo` and `make test` on a fresh machine say, in one line,
// that SQLite's C code is being built (issue 28: minutes of silence), and
// say nothing once the build cache has it. Each target's notice is run as
// make would run it: with an empty build cache it prints the line; with this
// test's own cache, which holds go-sqlite3 built as this test binary was
// (-race or not), the matching target's notice prints nothing.
func TestMakeSaysWhenSQLiteBuildsCold(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	race := false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			race = race || s.Key == "-race" && s.Value == "true"
		}
	}
	for _, c := range []struct {
		target string
		race   bool
	}{{"build", false}, {"test", true}} {
		out, err := exec.Command("make", "-n", "-C", root, c.target).Output()
		if err != nil {
			t.Fatalf("make -n %s: %v", c.target, err)
		}
		var notice string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.Contains(l, sqliteNotice) {
				notice = l
				break
			}
		}
		if notice == "" {
			t.Fatalf("make %s no longer says that it builds go-sqlite3 the first time; make -n:\n%s", c.target, out)
		}
		if strings.Contains(notice, " -race ") != c.race {
			t.Fatalf("make %s's notice asks about go-sqlite3 built with other flags than the target's (-race: %v): %s", c.target, c.race, notice)
		}
		run := func(env ...string) string {
			cmd := exec.Command("sh", "-c", notice)
			cmd.Dir = root
			cmd.Env = append(os.Environ(), env...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("make %s's notice: %v\n%s", c.target, err, stderr.String())
			}
			return stderr.String()
		}
		if got := run("GOCACHE=" + t.TempDir()); strings.Count(got, "\n") != 1 || !strings.Contains(got, sqliteNotice) {
			t.Errorf("make %s with an empty build cache printed %q, want one line saying it builds go-sqlite3", c.target, got)
		}
		if c.race == race {
			if got := run(); got != "" {
				t.Errorf("make %s with go-sqlite3 in the build cache printed %q, want nothing", c.target, got)
			}
		}
	}
}
