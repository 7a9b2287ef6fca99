package actions

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
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
		{InputName("from"), "the from: input"},
		{InputName("name"), "the branch: input"},
	} {
		if c.got != c.want || flag.MatchString(c.got) {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

func TestWarnIsAnAnnotation(t *testing.T) {
	got := Warn("left as it is: 100% ghp_0123456789abcdefghij0123\nsecond line", nil)
	if got != "::warning title=ghonce::left as it is: 100% [REDACTED]%0Asecond line" {
		t.Fatalf("Warn = %q", got)
	}
}

// Every option advice may name, and every field of an action the ghonce
// action carries, is said as an input action.yml declares, or not at all:
// advice never sends a workflow author to an input that does not exist.
func TestInputsAreTheActionsOwn(t *testing.T) {
	yml, err := os.ReadFile(filepath.Join("..", "..", "action.yml"))
	if err != nil {
		t.Fatal(err)
	}
	inputsPart, _, _ := strings.Cut(string(yml), "\noutputs:")
	declared := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^  ([a-z-]+):$`).FindAllStringSubmatch(inputsPart, -1) {
		declared[m[1]+":"] = true
	}
	options := []string{"repo", "task", "step", "ledger", "trust-author", "on-change", "stale", "wait", "body", "body-file", "content", "app-id", "app-private-key", "app-installation-id"}
	for _, o := range options {
		got := Inputs{}.Name(effect.Option{Name: o})
		if got != "" && !declared[got] {
			t.Errorf("option %q is said as %q, which action.yml does not declare (it declares %v)", o, got, declared)
		}
	}
	// The fields of the kinds the action's commands fill (pr-create,
	// issue-create, *-comment, branch-create, file-put).
	for _, f := range []string{"title", "body", "base", "head", "labels", "draft", "number", "name", "from", "branch", "path", "message", "content"} {
		got := InputName(f)
		for _, in := range regexp.MustCompile(`[a-z-]+:`).FindAllString(got, -1) {
			if !declared[in] {
				t.Errorf("field %q is said as %q: action.yml declares no %s", f, got, in)
			}
		}
	}
}
