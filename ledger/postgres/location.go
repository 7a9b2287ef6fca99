package postgres

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrBadURL is wrapped by Open's error for a ledger URL that cannot be
// read one way only: a password with a raw "@", "#", "?" or "/" that one
// parser would take as the end of the user-info and another would not, or
// a URL that does not parse. The error repeats nothing of the URL beyond
// its scheme, since the password is what is in doubt. A caller reports it
// as bad input.
var ErrBadURL = errors.New("unreadable ledger URL")

// encodeHint is the advice every ErrBadURL ends with.
const encodeHint = "percent-encode the password (`@` is `%40`), as every `#` (`%23`), `?` (`%3F`), `/` (`%2F`), `&` (`%26`), `;` (`%3B`) and `%` (`%25`) in it; " +
	"write the URL as postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE[?sslmode=...&search_path=SCHEMA]"

// location is a ledger URL parsed once. What is printed (display) and what
// is connected to (u, password) come from this one parse, so they cannot
// disagree about where the host starts.
type location struct {
	u *url.URL
	// display is u without its password, password=, sslpassword= and
	// any other parameter named like a password (secretParam).
	display string
	// password is the URL's password (the password= parameter over the
	// user-info's, as libpq reads them), and hasPassword whether it set one.
	password    string
	hasPassword bool
}

// parseLocation parses a postgres:// or postgresql:// URL. It refuses,
// with ErrBadURL, a URL whose user-info is ambiguous: more than one "@"
// before the host, or an "@" after a raw "/" or "?" that ended the
// authority early (a "/" or "?" in the password), or a raw "#" anywhere
// (Go's URL parser and libpq's disagree about all of them, and each
// disagreement put a piece of the password where an error message prints
// it).
func parseLocation(s string) (*location, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return nil, badURL(scheme, "it does not start with postgres://")
	}
	scheme = strings.ToLower(scheme)
	authEnd := strings.IndexAny(rest, "/?#")
	if authEnd < 0 {
		authEnd = len(rest)
	}
	auth, after := rest[:authEnd], rest[authEnd:]
	switch {
	case strings.Contains(rest, "#"):
		return nil, badURL(scheme, "it holds a raw `#`")
	case strings.Count(auth, "@") > 1:
		return nil, badURL(scheme, "more than one `@` before the host")
	case !strings.Contains(auth, "@"):
		// An "@" after the authority ended is the end of a user-info
		// that held a "/" or "?", unless a parameter (a "=") comes
		// first: "?application_name=me@corp" is a value.
		if at := strings.IndexByte(after, '@'); at >= 0 && !strings.Contains(after[:at], "=") {
			return nil, badURL(scheme, "a raw `/` or `?` in the user-info")
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" && u.Opaque != "" {
		// url's error quotes the input: never shown.
		return nil, badURL(scheme, "it does not parse as a URL")
	}
	if why := queryProblem(u.RawQuery); why != "" {
		return nil, badURL(scheme, why)
	}
	loc := &location{u: u}
	if u.User != nil {
		loc.password, loc.hasPassword = u.User.Password()
	}
	q := u.Query()
	if q.Has("password") {
		loc.password, loc.hasPassword = q.Get("password"), true
	}
	d := *u
	if u.User != nil {
		d.User = url.User(u.User.Username())
	}
	secret := false
	for name := range q {
		if secretParam(name) {
			q.Del(name)
			secret = true
		}
	}
	if secret {
		d.RawQuery = q.Encode()
	}
	loc.display = d.String()
	return loc, nil
}

// queryProblem says why a raw query string cannot be read one way only,
// or "" if it can. Go's parser drops a whole pair holding a raw ";" (so a
// password with one was printed verbatim, unparsed) where libpq keeps it
// in the value; a raw "&" in a value splits it, and each fragment after the
// first is a parameter without "=" (a name that would be printed).
func queryProblem(raw string) string {
	if strings.Contains(raw, ";") {
		return "a raw `;` in the query string"
	}
	for _, pair := range strings.Split(raw, "&") {
		if pair != "" && !strings.Contains(pair, "=") {
			return "a query parameter without `=` (a raw `&` inside a value)"
		}
	}
	if _, err := url.ParseQuery(raw); err != nil {
		// ParseQuery's error quotes the input: never shown.
		return "a query string that does not parse"
	}
	return ""
}

// secretParam reports whether a query parameter is one never printed:
// libpq's password and sslpassword, and anything named like a password in
// any case (PASSWORD=, db_password=), which a person meant as one.
func secretParam(name string) bool {
	return strings.Contains(strings.ToLower(name), "password")
}

func badURL(scheme, why string) error {
	if scheme != "postgres" && scheme != "postgresql" {
		scheme = "postgres"
	}
	return fmt.Errorf("open ledger %s://…: %w: %s; %s", scheme, ErrBadURL, why, encodeHint)
}

// connString is the URL pgx parses: the display form (no secret in it, so
// none can reach pgx's error texts) unless a TLS key's sslpassword has to
// be read while parsing. Open then sets the password on the parsed
// config.
func (l *location) connString() (s string, secret bool) {
	if l.u.Query().Has("sslpassword") {
		return l.u.String(), true
	}
	return l.display, false
}

// Redact returns location fit to print: the password (in the user info or
// a password parameter) and the TLS key's sslpassword are removed, by the
// same parse Open connects with. A location that does not parse, or whose
// user-info is ambiguous, is replaced by a placeholder rather than
// printed.
func Redact(location string) string {
	l, err := parseLocation(location)
	if err != nil {
		return "postgres://(unreadable URL)"
	}
	return l.display
}
