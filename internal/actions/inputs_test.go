package actions

import (
	"regexp"
	"testing"

	"github.com/ghonce/ghonce/effect"
)

// An option advice names, as the ghonce action's user reads it: the input
// under with:, never a flag.
func TestInputsNameTheActionsInputs(t *testing.T) {
	flag := regexp.MustCompile(`--[a-z]`)
	for _, c := range []struct {
		got, want string
	}{
		{Inputs{}.Name(effect.Option{Name: "on-change", Value: "update"}), "on-change: update"},
		{Inputs{}.Name(effect.Option{Name: "step"}), "step:"},
		{Inputs{}.Name(effect.Option{Name: "stale"}), "stale:"},
		{Inputs{}.Set(effect.Option{Name: "trust-author", Value: "x[bot]"}), "set trust-author: x[bot]"},
		{Inputs{}.Set(effect.Option{Name: "repo", Value: "OWNER/NAME"}), "set repo: OWNER/NAME"},
		{Inputs{}.Set(effect.Option{Name: "body"}), "set body:"},
		{InputName("body"), "the body: (or body-file:) input"},
		{Inputs{}.Set(effect.Option{Name: "content"}), "set content-file:"},
		{Inputs{}.Set(effect.Option{Name: "app-private-key"}), "set github-app-private-key:"},
		{Inputs{}.Name(effect.Option{Name: "app-installation-id"}), "github-app-installation-id:"},
		{InputName("from_branch"), "the from-branch: input"},
		{InputName("name"), "the branch: input"},
	} {
		if c.got != c.want || flag.MatchString(c.got) {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

func TestWarnIsAnAnnotation(t *testing.T) {
	got := Warn("left as it is: 100% ghp_0123456789abcdefghij0123\nsecond line", nil)
	if got != "::warning title=ghonce::left as it is: 100%25 [REDACTED]%0Asecond line" {
		t.Fatalf("Warn = %q", got)
	}
}
