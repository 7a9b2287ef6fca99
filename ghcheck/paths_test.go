package ghcheck_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// Every path ghcheck accepts is written exactly where it is looked up: the
// fake decodes each URL segment once, as GitHub does, so a path that was
// pasted into the URL unescaped (go-github's CreateFile) lands elsewhere
// ("C#/README.md" as "C") and this test fails. Every path it refuses is
// refused before a request leaves.
func TestOddPathsLandWhereTheyWereLookedUp(t *testing.T) {
	t.Parallel()
	s := budgetFake(t)
	c, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: bToken})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := ghcheck.Repo{Owner: owner, Name: name}
	for _, p := range []string{
		"C#/README.md", "notes/what?.md", "docs/50%25.md", "docs/50%.md", "docs/100% done.md",
		"with space/a b.md", "unicode/café-日本語.md", "plus+sign.md", "semi;colon,comma.md",
		"colon:first/x.md", "@at/=eq&amp.md", "%2F-not-a-slash.md", "..dots../x.md", ".github/x.yml",
	} {
		content := []byte("content of " + p + "\n")
		if res := c.FindFile(ctx, r, "main", p, content); res.State != ghcheck.Absent {
			t.Errorf("%q before the write: %s %v, want absent", p, res.State, res.Err)
			continue
		}
		if _, err := c.PutFile(ctx, r, "main", p, "add "+p, content, ""); err != nil {
			t.Errorf("put %q: %v", p, err)
			continue
		}
		if got, ok := s.FileContent(owner, name, "main", p); !ok || string(got) != string(content) {
			t.Errorf("%q was not written at that exact path; the fake holds %v", p, s.Files(owner, name, "main"))
		}
		if res := c.FindFile(ctx, r, "main", p, content); res.State != ghcheck.Found {
			t.Errorf("%q after the write: %s %v, want found", p, res.State, res.Err)
		}
	}
	before := len(s.Requests())
	for _, p := range []string{
		"", "/abs.md", "docs/", "a//b.md", ".", "..", "a/../b.md", "./a.md", "a/./b.md",
		"%2e%2e/x.md", "%2E%2e/x.md", ".%2e/x.md", "%2e./x.md", "%2e/x.md", "a/%2E%2E", "%252e%252e/x.md",
		"a\x00b.md", "tab\there.md", "zero\u200bwidth.md", "bom\ufeff.md", "\u202egnp.exe", "bad\xffutf8.md",
	} {
		if res := c.FindFile(ctx, r, "main", p, nil); res.State != ghcheck.Unknown || res.Err == nil || !strings.Contains(res.Err.Error(), "invalid path") {
			t.Errorf("find %q: %s %v, want it refused as an invalid path", p, res.State, res.Err)
		}
		_, err := c.PutFile(ctx, r, "main", p, "m", []byte("x"), "")
		var ce *effect.CreateError
		if !errors.As(err, &ce) || ce.Class != ghcheck.ClassRefused || !strings.Contains(err.Error(), "invalid path") {
			t.Errorf("put %q: %v, want it refused as an invalid path", p, err)
		}
	}
	if n := len(s.Requests()) - before; n != 0 {
		t.Errorf("refused paths sent %d requests, want none: %v", n, s.Requests()[before:])
	}
}
