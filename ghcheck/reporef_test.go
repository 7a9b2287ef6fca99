package ghcheck

import (
	"fmt"
	"testing"
)

// --repo takes what gh takes; each form names one OWNER/NAME, so one key.
func TestParseRepoRef(t *testing.T) {
	for in, want := range map[string]struct{ repo, host string }{
		"acme/app":                              {"acme/app", ""},
		"  acme/app\n":                          {"acme/app", ""},
		"acme/app.git":                          {"acme/app", ""},
		"github.com/acme/app":                   {"acme/app", "github.com"},
		"ghe.corp.example/acme/app":             {"acme/app", "ghe.corp.example"},
		"https://github.com/acme/app":           {"acme/app", "github.com"},
		"https://github.com/acme/app.git":       {"acme/app", "github.com"},
		"https://github.com/acme/app/":          {"acme/app", "github.com"},
		"http://127.0.0.1:8080/acme/app":        {"acme/app", "127.0.0.1:8080"},
		"git@github.com:acme/app.git":           {"acme/app", "github.com"},
		"git@github.com:acme/app":               {"acme/app", "github.com"},
		"ssh://git@github.com/acme/app.git":     {"acme/app", "github.com"},
		"https://GitHub.com/Acme/App.git":       {"Acme/App", "github.com"},
		"\thttps://github.com/acme/my.app.git ": {"acme/my.app", "github.com"},
	} {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) {
			r, host, err := ParseRepoRef(in)
			if err != nil || r.String() != want.repo || host != want.host {
				t.Errorf("ParseRepoRef(%q) = %s, %q, %v; want %s, %q", in, r, host, err, want.repo, want.host)
			}
		})
	}
	for _, in := range []string{
		"", "acme", "acme/", "/app", "a/b/c/d", "https://github.com/acme", "https://github.com/acme/app/pulls",
		"https://user:pw@github.com/acme/app", "https://github.com/acme/app?x=1", "https://github.com/acme/app#readme",
		"ftp://github.com/acme/app", "git@github.com/acme/app", "acme/app name", "acme/..", "acme/.git", "octo-org/hello-world/x",
	} {
		if r, host, err := ParseRepoRef(in); err == nil {
			t.Errorf("ParseRepoRef(%q) = %s, %q; want an error", in, r, host)
		}
	}
	if _, err := ParseRepo("acme/app.git"); err == nil {
		t.Error(`ParseRepo("acme/app.git") accepted the .git spelling: its key would differ from acme/app's`)
	}
}

func TestSameHost(t *testing.T) {
	for _, tc := range []struct {
		host, base string
		want       bool
	}{
		{"github.com", "", true},
		{"github.com", "https://api.github.com", true},
		{"www.github.com", "https://api.github.com/", true},
		{"ghe.corp", "https://ghe.corp/api/v3", true},
		{"ghe.corp", "https://api.github.com", false},
		{"github.com", "https://ghe.corp/api/v3", false},
	} {
		t.Run(tc.host+" "+tc.base, func(t *testing.T) {
			if got := SameHost(tc.host, tc.base); got != tc.want {
				t.Errorf("SameHost(%q, %q) = %v, want %v", tc.host, tc.base, got, tc.want)
			}
		})
	}
}
