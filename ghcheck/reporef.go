package ghcheck

import (
	"fmt"
	"net/url"
	"strings"
)

// ParseRepoRef parses a repository the way gh's --repo takes it, after
// trimming surrounding white space: OWNER/NAME, HOST/OWNER/NAME (HOST with
// a dot or a port, or localhost),
// https://HOST/OWNER/NAME (an http(s) or ssh:// URL, with or without
// ".git" and a trailing "/"), or git@HOST:OWNER/NAME.git. A ".git" suffix
// is dropped ("acme/app.git" is acme/app, as on GitHub). host is the host
// the reference names, lower-cased, or "" when it names none; the caller
// checks it against the API it talks to. Anything else (a query, a
// fragment, a path past NAME, user info other than ssh's "git@") is
// refused.
func ParseRepoRef(s string) (r Repo, host string, err error) {
	in := strings.TrimSpace(s)
	bad := func() (Repo, string, error) {
		return Repo{}, "", fmt.Errorf("invalid repository %q: want OWNER/NAME, HOST/OWNER/NAME or a clone URL (https://github.com/OWNER/NAME.git, git@github.com:OWNER/NAME.git)", s)
	}
	p := in
	switch {
	case strings.Contains(in, "://"):
		u, err := url.Parse(in)
		if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
			return bad()
		}
		switch strings.ToLower(u.Scheme) {
		case "https", "http":
			if u.User != nil {
				return bad()
			}
		case "ssh", "git+ssh":
			if u.User != nil && u.User.Username() != "git" {
				return bad()
			}
		default:
			return bad()
		}
		host, p = u.Host, strings.Trim(u.Path, "/")
	case strings.HasPrefix(in, "git@"):
		h, rest, ok := strings.Cut(strings.TrimPrefix(in, "git@"), ":")
		if !ok || h == "" {
			return bad()
		}
		host, p = h, rest
	}
	p = strings.TrimSuffix(strings.TrimSuffix(p, "/"), ".git")
	parts := strings.Split(p, "/")
	switch {
	case len(parts) == 3 && host == "" && looksLikeHost(parts[0]):
		host, parts = parts[0], parts[1:]
	case len(parts) != 2:
		return bad()
	}
	r, err = ParseRepo(parts[0] + "/" + parts[1])
	if err != nil || strings.ContainsAny(host, "/@?# ") {
		return bad()
	}
	return r, strings.ToLower(host), nil
}

// looksLikeHost: HOST of HOST/OWNER/NAME names a machine (a dot, a port,
// or localhost), so "owner/name/extra" is a malformed repository, not a
// host called "owner".
func looksLikeHost(s string) bool {
	return strings.ContainsAny(s, ".:") || strings.EqualFold(s, "localhost")
}

// WebHost is the host of the web site that the API root base serves
// ("github.com" for https://api.github.com and for an empty base;
// HOST for https://HOST/api/v3), lower-cased, or the base's own host for
// anything else: what a --repo naming a host must name.
func WebHost(base string) string {
	if strings.TrimSpace(base) == "" {
		return "github.com"
	}
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	h := strings.ToLower(u.Host)
	if h == "api.github.com" {
		return "github.com"
	}
	return h
}

// SameHost reports whether a --repo's host names the site of the API root
// base: equal hosts, with "www.github.com" as github.com.
func SameHost(repoHost, base string) bool {
	want := WebHost(base)
	repoHost = strings.TrimPrefix(strings.ToLower(repoHost), "www.")
	return repoHost == want || repoHost == strings.TrimPrefix(want, "www.")
}
