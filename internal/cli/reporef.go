package cli

import (
	"github.com/ghonce/ghonce/ghcheck"
)

// repoRef reads a repository as gh's --repo takes it (OWNER/NAME,
// HOST/OWNER/NAME, an https or ssh clone URL, surrounding white space) and
// returns OWNER/NAME, the one spelling keys are derived from. A host that is
// not the site of the API root apiBase (GITHUB_API_URL) is refused: the
// token and every request go to that API, so acting on "another host's"
// repository would act on a namesake.
func repoRef(s, apiBase string) (string, error) {
	r, host, err := ghcheck.ParseRepoRef(s)
	if err != nil {
		return "", usage(err)
	}
	if host != "" && !ghcheck.SameHost(host, apiBase) {
		api := apiBase
		if api == "" {
			api = "https://api.github.com (the default)"
		}
		return "", usagef("repository %s is on %s, but GITHUB_API_URL is %s: set GITHUB_API_URL=https://%s/api/v3 for GitHub Enterprise, or drop the host", r, host, api, host)
	}
	return r.String(), nil
}
