package fakegithub

import (
	"net/http"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/tests/fgtest"
)

// TestNoInputBreaksTheServer sends odd parameters and bodies to every
// route: the fake must answer each with a 4xx or 2xx, never a 5xx or a
// dropped connection (which is how a recovered panic would show).
func TestNoInputBreaksTheServer(t *testing.T) {
	s, _ := newTest(t, Options{})
	fgtest.FeatureBranch(t, s, "feat")
	s.SeedPR(owner, name, "x", SeedPR{Title: "p", Head: "feat"})
	s.SeedComment(owner, name, 1, "x", "c")
	values := []string{"1", "0", "-1", "abc", "99999999999999999999", "%E2%82%AC", "a%2Fb", "..."}
	bodies := []string{"", "{}", "[]", "null", `"s"`, "123", `{"title":null,"body":5}`, `{"labels":{}}`, `[1,{"name":2}]`, `{"ref":"refs/heads/z","sha":""}`, `{"message":"m","content":"eA==","branch":"../x"}`}
	queries := []string{"", "?per_page=-5&page=0", "?per_page=abc&page=99999999999", "?state=x&head=:&base=&labels=,,&since=nope&sort=x&direction=x", "?q=%22&ref="}
	var paths []string
	for _, rt := range s.routes {
		for _, v := range values {
			var segs []string
			for _, seg := range rt.segs {
				switch {
				case seg == "{owner}":
					segs = append(segs, owner)
				case seg == "{repo}":
					segs = append(segs, name)
				case strings.HasPrefix(seg, "{"):
					segs = append(segs, v)
				default:
					segs = append(segs, seg)
				}
			}
			paths = append(paths, rt.method+" /"+strings.Join(segs, "/"))
		}
	}
	for _, p := range paths {
		method, path, _ := strings.Cut(p, " ")
		for _, q := range queries {
			for _, b := range bodies {
				if method == http.MethodGet && b != "" {
					continue
				}
				r := fgtest.Do(t, s, token, method, path+q, b)
				if r.Status >= 500 {
					t.Errorf("%s %s%s body %s = %d %s", method, path, q, b, r.Status, r.Body)
				}
			}
		}
	}
}
