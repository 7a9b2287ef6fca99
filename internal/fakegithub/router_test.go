package fakegithub

import (
	"strings"
	"testing"
)

// Each resource's file registers its own routes, in whatever order the
// files are read: every route must still answer its own paths, so two
// files that registered the same shape under other parameter names (one
// of them unreachable) fail here, and so does a wildcard that swallows a
// literal route.
func TestEveryRouteAnswersItsOwnPaths(t *testing.T) {
	s, _ := newTest(t, Options{})
	for _, rt := range s.routes {
		var segs []string
		for _, p := range rt.segs {
			switch {
			case p == "{owner}":
				segs = append(segs, owner)
			case p == "{repo}":
				segs = append(segs, name)
			case strings.HasSuffix(p, "...}"):
				segs = append(segs, "a", "b")
			case strings.HasPrefix(p, "{"):
				segs = append(segs, "7")
			default:
				segs = append(segs, p)
			}
		}
		want := rt.method + " " + strings.Join(rt.segs, "/")
		got, ok := s.match(&call{}, rt.method, segs)
		if !ok || got.method+" "+strings.Join(got.segs, "/") != want {
			t.Errorf("%s /%s is answered by %s /%s, want %s", rt.method, strings.Join(segs, "/"), got.method, strings.Join(got.segs, "/"), want)
		}
	}
	if len(s.routes) < 60 {
		t.Fatalf("%d routes; the resources' files registered fewer than the fake serves", len(s.routes))
	}
}

// The order routes are registered in does not decide which one answers: a
// literal segment wins over a wildcard in the same place.
func TestLiteralSegmentsWinOverWildcards(t *testing.T) {
	s, _ := newTest(t, Options{})
	for path, want := range map[string]string{
		"repos/o/r/pulls/comments":        "repos/{owner}/{repo}/pulls/comments",
		"repos/o/r/pulls/comments/7":      "repos/{owner}/{repo}/pulls/comments/{id}",
		"repos/o/r/pulls/7":               "repos/{owner}/{repo}/pulls/{number}",
		"repos/o/r/issues/comments/7":     "repos/{owner}/{repo}/issues/comments/{id}",
		"repos/o/r/releases/tags/v1":      "repos/{owner}/{repo}/releases/tags/{tag...}",
		"repos/o/r/git/ref/heads/comment": "repos/{owner}/{repo}/git/ref/{ref...}",
	} {
		rt, ok := s.match(&call{}, "GET", strings.Split(path, "/"))
		if got := strings.Join(rt.segs, "/"); !ok || got != want {
			t.Errorf("GET /%s is answered by /%s, want /%s", path, got, want)
		}
	}
}
