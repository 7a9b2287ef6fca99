package secret

import (
	"strings"
	"testing"
)

// stateless is shaped as GitHub's stateless installation tokens are:
// ghs_APPID_JWT, about 520 characters, two dots.
var stateless = "ghs_31337_eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9." + strings.Repeat("eyJpc3MiOjEyMzQ1Ng_-", 6) + "." + strings.Repeat("c2lnbmF0dXJl-_", 27)

func TestShapesTakeEveryTokenWhole(t *testing.T) {
	if n, dots := len(stateless), strings.Count(stateless, "."); n < 500 || dots != 2 {
		t.Fatalf("the test token has %d characters and %d dots, want about 520 and 2", n, dots)
	}
	for _, tok := range []string{
		stateless,
		"ghs_16CharactersLongXyZ0123456789abcdef", // the classic installation token
		"ghp_0123456789abcdefghijABCDEFGHIJ012345",
		"gho_0123456789abcdefghij", "ghu_0123456789abcdefghij", "ghr_0123456789abcdefghij",
		"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
		"eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiIxMjMifQ.c2lnbmF0dXJl", // an App's JWT
	} {
		t.Run(tok[:8], func(t *testing.T) {
			in := "auth failed for " + tok + ". Try again."
			got := Shapes(in)
			if want := "auth failed for " + Mask + ". Try again."; got != want {
				t.Fatalf("Shapes left %q, want %q", got, want)
			}
		})
	}
	for _, keep := range []string{"ghonce_actions_total", "gh_pr", "the gh shim", "ghs_short", "gk1_kjasefmarpcuw23sezkt3qsgnvuhywfz"} {
		if got := Shapes(keep); got != keep {
			t.Errorf("Shapes(%q) = %q: not a token", keep, got)
		}
	}
}

func TestSetScrubsItsValues(t *testing.T) {
	var s Set
	s.Add("", "  ", "hunter2-long-secret", "hunter2-long-secret\n", "hunter2")
	if got := s.Scrub("a hunter2-long-secret, a hunter2 and " + stateless); got != "a "+Mask+", a "+Mask+" and "+Mask {
		t.Fatalf("Scrub = %q", got)
	}
	if n := len(s.Values()); n != 2 {
		t.Fatalf("%d values, want 2 (empty ignored, duplicates once)", n)
	}
	var nilSet *Set
	if got := nilSet.Scrub("x " + stateless); got != "x "+Mask {
		t.Fatalf("a nil Set's Scrub = %q, want the shapes scrubbed", got)
	}
	for i := range maxValues + 5 {
		s.Add(strings.Repeat("v", 10+i))
	}
	if n := len(s.Values()); n != maxValues {
		t.Fatalf("%d values, want at most %d", n, maxValues)
	}
}
