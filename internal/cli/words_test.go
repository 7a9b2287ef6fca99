package cli

import (
	"maps"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/internal/actions"
)

// Advice from below the fronts (the ledger, the GitHub layer) names the
// option to set in the words of the front that runs: through the ghonce
// action's own step, its input; from the command line, the flag and the
// variable, as ever. Neither rewrites the other's text.
func TestAdviceNamesTheFrontsOptions(t *testing.T) {
	w := newCLIWorld(t)
	const appToken = "ghs_GHONCEtestSECRET_wordsapp_5c1d" // a placeholder the fake accepts
	w.fake.AddInstallationToken("words-app[bot]", appToken)
	action := map[string]string{"GITHUB_ACTIONS": "true", "GHONCE_VIA_ACTION": "true", "GITHUB_REPOSITORY": ""}
	// The job's own token is another: the action's step then assumes no
	// github-actions[bot] for this one.
	installation := map[string]string{"GH_TOKEN": appToken, actions.JobTokenEnv: testToken}
	for _, tc := range []struct {
		name      string
		env       map[string]string
		args      []string
		cli, step string // what the command line and the action's step say
	}{
		{"the repository ledger names no repository", nil, []string{"status", "--ledger", "github"},
			"pass --repo OWNER/REPO or set GH_REPO", "set repo: OWNER/REPO"},
		{"an installation token cannot read /user", installation, []string{"issue", "create", "--task", "T", "--title", "t", "--body", "b", "--repo", testRepo},
			"start ghonce with --trust-author LOGIN", "set trust-author: LOGIN"},
	} {
		o := w.run("", tc.env, tc.args...)
		if o.code == 0 || !strings.Contains(o.stderr, tc.cli) {
			t.Errorf("%s, on the command line: exit %d, stderr %q; want it to say %q", tc.name, o.code, o.stderr, tc.cli)
		}
		env := maps.Clone(action)
		maps.Copy(env, tc.env)
		o = w.run("", env, tc.args...)
		if o.code == 0 || !strings.Contains(o.stderr, tc.step) || strings.Contains(o.stderr, "--repo") || strings.Contains(o.stderr, "--trust-author") {
			t.Errorf("%s, through the action: exit %d, stderr %q; want it to say %q and name no flag", tc.name, o.code, o.stderr, tc.step)
		}
	}
}
