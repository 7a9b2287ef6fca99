package fakegithub

import (
	"slices"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/kinds"
	_ "github.com/ghonce/ghonce/reconcile" // registers the kinds on GitHub
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
}

// The fake serves every kind's REST write and the reads its artifact is
// read back by (effect.Face's Write and ReadBack), each by a route of
// that shape: a resource whose file did not register its routes fails.
func TestEveryKindsWriteAndReadBackAreServed(t *testing.T) {
	s, _ := newTest(t, Options{})
	n := 0
	for _, kind := range kinds.All() {
		f, _ := kinds.FaceOf(kind)
		eps := []string{f.Write}
		for _, rb := range f.ReadBack {
			eps = append(eps, "GET "+rb)
		}
		for _, ep := range eps {
			method, path, ok := strings.Cut(ep, " ")
			if !ok {
				continue
			}
			n++
			want := strings.Split(path, "/")
			segs := slices.Clone(want)
			for i, p := range segs {
				if strings.HasPrefix(p, "{") {
					segs[i] = "7"
				}
			}
			rt, ok := s.match(&call{}, method, segs)
			same := ok && len(rt.segs) <= len(want)
			for i := 0; same && i < len(rt.segs); i++ {
				if strings.HasSuffix(rt.segs[i], "...}") { // the rest of the path
					break
				}
				same = i < len(want) && (rt.segs[i] == want[i] || strings.HasPrefix(rt.segs[i], "{") && strings.HasPrefix(want[i], "{"))
				same = same && (i < len(rt.segs)-1 || len(rt.segs) == len(want))
			}
			if !same {
				t.Errorf("%s: %s is not served by a route of its shape (got %s /%s)", kind, ep, rt.method, strings.Join(rt.segs, "/"))
			}
		}
	}
	if n == 0 {
		t.Fatal("no kind declares a REST write: the registry is empty")
	}
}

// The order routes are registered in does not decide which one answers: a
// literal segment wins over a wildcard in the same place.
func TestLiteralSegmentsWinOverWildcards(t *testing.T) {
	s, _ := newTest(t, Options{})
	for path, want := range map[string]string{
		"repos/o/r/issues/comments":       "repos/{owner}/{repo}/issues/comments",
		"repos/o/r/pulls/7":               "repos/{owner}/{repo}/pulls/{number}",
		"repos/o/r/issues/comments/7":     "repos/{owner}/{repo}/issues/comments/{id}",
		"repos/o/r/git/ref/heads/comment": "repos/{owner}/{repo}/git/ref/{ref...}",
	} {
		rt, ok := s.match(&call{}, "GET", strings.Split(path, "/"))
		if got := strings.Join(rt.segs, "/"); !ok || got != want {
			t.Errorf("GET /%s is answered by /%s, want /%s", path, got, want)
		}
	}
}
