package ledger

import (
	"errors"
	"path/filepath"
)

// EnvPath names the environment variable that chooses the ledger file when
// no flag does.
const EnvPath = "GHONCE_LEDGER"

// DefaultPath is where ghonce keeps its ledger when the caller names none,
// the same place the ghonce command uses; first match wins:
//
//  1. $GHONCE_LEDGER (a file path, or a URL such as postgres://…);
//  2. inside a GitHub Actions job (GITHUB_ACTIONS=true),
//     $RUNNER_TEMP/ghonce/ledger.db: the runner empties it after the job,
//     and a re-run finds on GitHub what an earlier attempt made;
//  3. $XDG_STATE_HOME/ghonce/ledger.db (an XDG_STATE_HOME that is not an
//     absolute path is ignored, as the XDG base directory spec asks);
//  4. $HOME/.local/state/ghonce/ledger.db.
//
// getenv is os.Getenv in production; tests pass their own. It fails only
// when none of these is set. The result is what store.Open takes.
func DefaultPath(getenv func(string) string) (string, error) {
	if getenv == nil {
		return "", errors.New("locate ledger: no environment to read")
	}
	if p := getenv(EnvPath); p != "" {
		return p, nil
	}
	if dir := getenv("RUNNER_TEMP"); dir != "" && getenv("GITHUB_ACTIONS") == "true" {
		return filepath.Join(dir, "ghonce", "ledger.db"), nil
	}
	if dir := getenv("XDG_STATE_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "ghonce", "ledger.db"), nil
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "state", "ghonce", "ledger.db"), nil
	}
	return "", errors.New("locate ledger: none of " + EnvPath + ", XDG_STATE_HOME or HOME is set")
}

// ResolvePath is flag (a location the caller was given, such as the
// --ledger flag) when it is not empty, else DefaultPath. A relative flag
// stays relative to the working directory.
func ResolvePath(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	return DefaultPath(getenv)
}
