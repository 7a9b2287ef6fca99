package offgithub

import (
	"os"
	"strings"

	"github.com/ghonce/ghonce/ledger"
)

// childEnv is the environment of a guarded command and of its check:
// ghonce's own environment plus GHONCE_KEY=key, less GHONCE_LEDGER when
// it names a ledger by URL (postgres://USER:PASSWORD@...: ghonce's
// secret, not the command's), unless x.PassLedger asks for it. A ledger
// file path is no secret and is passed on, so a command that runs ghonce
// itself keeps using the same SQLite ledger.
func (x Exec) childEnv(key string) []string {
	env := os.Environ()
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		name, val, _ := strings.Cut(kv, "=")
		if name == "GHONCE_KEY" || name == ledger.EnvPath && !x.PassLedger && strings.Contains(val, "://") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "GHONCE_KEY="+key)
}
