package ghcheck

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"strings"

	"github.com/google/go-github/v66/github"
)

// Classify says what a failed request means for the artifact it was meant
// to create. When in doubt it answers ClassMaybe.
//
//   - A *CreateError keeps its Class.
//   - ClassExists: a 422 *github.ErrorResponse saying the thing already
//     exists: "Reference already exists" (no errors array), "A pull request
//     already exists for owner:branch." (errors[].message, code custom), or
//     any errors[].code already_exists.
//   - ClassRefused: GitHub answered and created nothing: any other 4xx
//     (401, 403, 404, 409, 422, a 429, which go-github v66 returns as a
//     plain *github.ErrorResponse), *github.RateLimitError and
//     *github.AbuseRateLimitError that came from the network.
//   - ClassNotSent: no byte of the request reached GitHub. Inside this
//     package every request runs through a transport that records whether
//     it was reached; an error from a request that never reached it (go-
//     github refusing locally before a known rate-limit reset, a request
//     that could not be built, a context cancelled before sending) is
//     marked and classified here. For errors from elsewhere, go-github's
//     local refusal is recognised by its synthetic response: a
//     *RateLimitError or *AbuseRateLimitError whose message ends in "not
//     making remote request." and whose response has no protocol version
//     (no real exchange produced it). Dial and proxy-connect failures
//     (*net.OpError with Op "dial" or "proxyconnect") and certificate
//     verification failures and a first answer that is not TLS at all
//     (the TLS handshake precedes the request), and a *net.DNSError (the
//     host never resolved), are not sent either. A TLS alert is not: in
//     TLS 1.3 the server's alert may follow the request.
//   - ClassMaybe: 5xx, timeouts, a connection reset or EOF after sending, a
//     context cancelled while waiting for the answer, a 2xx whose body
//     could not be read, anything else.
//
// Classify(nil) returns 0, which is not a valid Class.
func Classify(err error) Class {
	if err == nil {
		return 0
	}
	var ce *CreateError
	if errors.As(err, &ce) && ce.Class != 0 {
		return ce.Class
	}
	var ns *notSentError
	if errors.As(err, &ns) {
		return ClassNotSent
	}
	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		if localRefusal(rl.Response, rl.Message) {
			return ClassNotSent
		}
		return ClassRefused
	}
	var ab *github.AbuseRateLimitError
	if errors.As(err, &ab) {
		if localRefusal(ab.Response, ab.Message) {
			return ClassNotSent
		}
		return ClassRefused
	}
	var tf *github.TwoFactorAuthError
	if errors.As(err, &tf) {
		return ClassRefused
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) {
		code := statusOf(er)
		switch {
		case code == http.StatusUnprocessableEntity && alreadyExists(er):
			return ClassExists
		case code >= 400 && code <= 499:
			return ClassRefused
		}
		return ClassMaybe
	}
	if errors.Is(err, github.ErrPathForbidden) {
		return ClassNotSent // go-github refuses ".." in a path before building the request
	}
	var oe *net.OpError
	if errors.As(err, &oe) && (oe.Op == "dial" || oe.Op == "proxyconnect") {
		// Nothing was written on a connection that was never made. Go's
		// transport retries a POST or PUT on a new connection only when
		// nothing was written on the old one, so the dial error is the
		// whole story.
		return ClassNotSent
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return ClassNotSent // the host's address was never found
	}
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return ClassNotSent
	}
	// A server that does not speak TLS answers the ClientHello with
	// something else; crypto/tls sets Conn only for that first record, so
	// a bad record later (after the request was written) stays maybe.
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) && rh.Conn != nil {
		return ClassNotSent
	}
	// net/http's word for that first record when it reads "HTTP/": an
	// https:// URL for a plain HTTP server. A server that spoke TLS through
	// a handshake never switches to plain HTTP afterwards.
	if errors.Is(err, http.ErrSchemeMismatch) {
		return ClassNotSent
	}
	return ClassMaybe
}

// notSentError marks an error of a request that never reached the
// transport: nothing left the process.
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }
func (e *notSentError) Unwrap() error { return e.err }

// localRefusal reports whether a rate-limit error is go-github's own
// refusal (checkRateLimitBeforeDo, checkSecondaryRateLimitBeforeDo in v66):
// those build a fake 403 response with no protocol version and say "not
// making remote request"; a real exchange always has a protocol version.
func localRefusal(resp *http.Response, msg string) bool {
	return strings.Contains(msg, "not making remote request") && (resp == nil || resp.ProtoMajor == 0)
}

// alreadyExists reports whether a 422 says the resource exists.
func alreadyExists(er *github.ErrorResponse) bool {
	if containsFold(er.Message, "already exists") {
		return true
	}
	for _, e := range er.Errors {
		if e.Code == "already_exists" || containsFold(e.Message, "already exists") {
			return true
		}
	}
	return false
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), sub)
}

func statusOf(er *github.ErrorResponse) int {
	if er.Response == nil {
		return 0
	}
	return er.Response.StatusCode
}

// httpStatus returns the status of a plain *github.ErrorResponse in err's
// chain (not of a rate-limit error), or 0.
func httpStatus(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && !isRateLimit(err) {
		return statusOf(er)
	}
	return 0
}

// notFound reports whether GitHub answered 404.
func notFound(err error) bool { return httpStatus(err) == http.StatusNotFound }
