package cli

import "testing"

func TestZZTmpPercent(t *testing.T) {
	w := newCLIWorld(t)
	env := map[string]string{"GITHUB_ACTIONS": "true", "GHONCE_TASK": "T", "GITHUB_WORKFLOW": "w", "GITHUB_JOB": "j", "GITHUB_RUN_ID": "1"}
	r := w.gh("", env, "issue", "create", "--title", "Crash on start", "--body", "b", "--repo", testRepo)
	t.Logf("1: %d %s", r.code, r.stderr)
	r = w.gh("", env, "issue", "create", "--title", "Add a dark mode to the settings page", "--body", "b", "--repo", testRepo)
	t.Logf("3: %d %s", r.code, r.stderr)
	env["GHONCE_VIA_ACTION"] = "true"
	r = w.run("", env, "issue", "create", "--title", "Add a dark mode to the settings page now", "--body", "b", "--repo", testRepo)
	t.Logf("4: %d %s", r.code, r.stderr)
}
