// Package fakegithub is a fake GitHub server for `ghonce demo` and, through
// the test kit that wraps it (package fixtures), for tests: a
// stateful, in-memory fake of the GitHub REST endpoints ghonce uses (pull
// requests, issues, labels, issue comments, git refs, compare, commits, file
// contents). It is not a GitHub client and not API to build
// on.
//
// It is shipped in the ghonce binary for `ghonce demo`, so it holds
// GitHub's real semantics and nothing else, including the ones that cause
// duplicate side effects when a client gets them wrong:
//
//   - GET .../pulls?head= is honoured only as "owner:branch". A bare branch
//     is silently ignored (every PR comes back); "owner/repo:branch" matches
//     nothing.
//   - The issues API returns pull requests too, with a "pull_request" key;
//     PRs and issues share one number space.
//   - Lists are paginated (default 30, at most 100 per page) with RFC 5988
//     Link headers that, like GitHub's, point at /repositories/{id}/...
//   - Creating a ref that exists answers 422 "Reference already exists" with
//     no errors array; creating a PR while an open one exists for the same
//     head and base answers 422 with a "custom" error; issues and comments
//     have no uniqueness at all.
//   - A PR needs at least one commit between base and head, like GitHub's
//     "No commits between main and feature" 422.
//   - Bodies are limited to 65,536 characters and label names to 50.
//   - Every response carries X-RateLimit-* headers, and the primary limits
//     are enforced (see Options.CoreLimit).
//   - GitHub Apps (apps.go): GET /app, GET /repos/{o}/{r}/installation and
//     POST /app/installations/{id}/access_tokens take an RS256 JWT checked
//     as GitHub checks it; installation tokens expire, act as "SLUG[bot]"
//     and, like Actions' GITHUB_TOKEN (AddInstallationToken), get 403 from
//     GET /user.
//
// The server listens on 127.0.0.1 only and serves the API under a prefix
// (default "/api/v3/", GitHub Enterprise's layout), so a client that builds
// absolute paths instead of resolving against its base URL fails loudly.
//
// Faults (a 5xx, a dropped answer, rate limits on demand), latency and the
// hooks where a test kills its client are not here: they are the test kit's
// (package fixtures), which reaches the request path only through
// Options.Intercept (see Interceptor).
//
// Everything is safe for concurrent use.
package fakegithub
