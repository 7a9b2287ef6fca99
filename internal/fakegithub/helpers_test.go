package fakegithub

import (
	"encoding/json"
	"testing"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/tests/fgtest"
)

const (
	owner = fgtest.Owner
	name  = fgtest.Name
	token = fgtest.Token
)

// newTest starts a fake with user octo (token tok-octo) and repository
// octo/hello, and a go-github client for octo.
func newTest(t *testing.T, opts Options) (*Server, *github.Client) {
	t.Helper()
	s := NewServer(opts)
	t.Cleanup(s.Close)
	return s, fgtest.Seed(t, s)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
