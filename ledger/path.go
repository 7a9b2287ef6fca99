package ledger

import (
	"errors"
	"path/filepath"
)

// EnvPath names the environment variable that chooses the ledger file when
// no flag does.
const EnvPath = "GHONCE_LEDGER"

// ResolvePath chooses the ledger file, first match wins:
//
//  1. flag, when non-empty (the --ledger flag);
//  2. $GHONCE_LEDGER;
//  3. $XDG_STATE_HOME/ghonce/ledger.db (an XDG_STATE_HOME that is not an
//     absolute path is ignored, as the XDG base directory spec asks);
//  4. $HOME/.local/state/ghonce/ledger.db.
//
// getenv is os.Getenv in production; tests pass their own. The path is
// returned as found (a relative flag stays relative to the working
// directory). It fails, with a hint, only when none of the four is set.
func ResolvePath(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if getenv == nil {
		return "", errors.New("resolve ledger path: no environment given; pass --ledger PATH")
	}
	if p := getenv(EnvPath); p != "" {
		return p, nil
	}
	if dir := getenv("XDG_STATE_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "ghonce", "ledger.db"), nil
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "state", "ghonce", "ledger.db"), nil
	}
	return "", errors.New("resolve ledger path: neither XDG_STATE_HOME nor HOME is set; pass --ledger PATH or set " + EnvPath)
}
