package offgithub_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/offgithub"
)

// A guarded command and its check inherit ghonce's environment, but not a
// GHONCE_LEDGER URL (it may hold the ledger's password) unless the action
// asks for it; a ledger file path is passed on. Not parallel: it sets the
// process environment the command inherits.
func TestExecDoesNotInheritTheLedgerSecret(t *testing.T) {
	const url = "postgres://ghonceu:S3cret-Ledger@127.0.0.1/db"
	for _, tc := range []struct {
		name   string
		ledger string
		pass   bool
		want   string // GHONCE_LEDGER the command sees
	}{
		{"a URL is withheld", url, false, ""},
		{"--pass-ledger passes it", url, true, url},
		{"a file path is passed on", "/var/lib/ghonce/ledger.db", false, "/var/lib/ghonce/ledger.db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GHONCE_LEDGER", tc.ledger)
			t.Setenv("DOOR18_KEEP", "kept")
			x := newExecWorld(t)
			e, _ := x.engine()
			seen := filepath.Join(t.TempDir(), "seen")
			script := `printf '%s|%s|%s\n' "${GHONCE_LEDGER-unset}" "$DOOR18_KEEP" "$GHONCE_KEY" >> "$1"`
			spec := offgithub.Exec{
				Argv:       []string{"/bin/sh", "-c", script, "cmd", seen},
				Check:      `/bin/sh -c '` + strings.ReplaceAll(script, "'", `'\''`) + `; exit 1' check ` + seen,
				PassLedger: tc.pass,
			}
			a := execAction(spec)
			if _, err := do(context.Background(), e, a); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(seen)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = "unset"
			}
			line := want + "|kept|" + keyOf(t, a)
			if got := strings.Split(strings.TrimSpace(string(b)), "\n"); len(got) != 2 || got[0] != line || got[1] != line {
				t.Errorf("the check and the command saw %q, want %q twice", got, line)
			}
		})
	}
}
