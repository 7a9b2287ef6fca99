package ghcheck

import (
	"errors"

	"github.com/google/go-github/v66/github"
)

// ResponseError is what GitHub answered to a request that failed: the
// HTTP status and the first field its errors array named ("title",
// "head"), or "". Every error of this package for a request GitHub
// answered (a Result's Err, a *CreateError, the error of any other method)
// carries one in its chain, so a front end reads GitHub's answer with
// errors.As without knowing go-github's error types. An error with none in
// its chain got no answer from GitHub.
type ResponseError struct {
	StatusCode int
	Field      string
	Err        error
}

func (e *ResponseError) Error() string { return e.Err.Error() }
func (e *ResponseError) Unwrap() error { return e.Err }

// withResponse wraps err in a *ResponseError when go-github's error in its
// chain carries an answer, unless one is there already.
func withResponse(err error) error {
	var re *ResponseError
	if errors.As(err, &re) {
		return err
	}
	if st, field := answerOf(err); st != 0 {
		return &ResponseError{StatusCode: st, Field: field, Err: err}
	}
	return err
}

// answerOf is the HTTP status and the first field GitHub named, from
// go-github's error in err's chain; 0 when there is none.
func answerOf(err error) (int, string) {
	var er *github.ErrorResponse
	if errors.As(err, &er) {
		field := ""
		for _, e := range er.Errors {
			if e.Field != "" {
				field = e.Field
				break
			}
		}
		return statusOf(er), field
	}
	var rl *github.RateLimitError
	if errors.As(err, &rl) && rl.Response != nil {
		return rl.Response.StatusCode, ""
	}
	var ab *github.AbuseRateLimitError
	if errors.As(err, &ab) && ab.Response != nil {
		return ab.Response.StatusCode, ""
	}
	return 0, ""
}
