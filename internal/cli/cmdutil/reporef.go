package cmdutil

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
		return "", Usage(err)
	}
	if host != "" && !ghcheck.SameHost(host, apiBase) {
		api := apiBase
		if api == "" {
			api = "https://api.github.com (the default)"
		}
		return "", Usagef("repository %s is on %s, but GITHUB_API_URL is %s: %s, or drop the host", r, host, api, apiRootAdvice(host))
	}
	return r.String(), nil
}

// apiRootAdvice says which API root serves the site host: github.com's is
// https://api.github.com (GITHUB_API_URL unset is the same), not
// https://github.com/api/v3, which answers no API request; a GitHub
// Enterprise Server's is https://HOST/api/v3.
func apiRootAdvice(host string) string {
	if ghcheck.SameHost(host, "") {
		return "for github.com, unset GITHUB_API_URL or set GITHUB_API_URL=https://api.github.com"
	}
	return "for GitHub Enterprise Server, set GITHUB_API_URL=https://" + host + "/api/v3"
}
