package ghcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"

	"github.com/ghonce/ghonce/effect"
)

func TestLoginOncePerClient(t *testing.T) {
	var gets counter
	c, _ := newTest(t, Options{},
		route(mock.GetUser, gets.seq(reply(200, user("Octo-Bot")))),
	)
	for range 3 {
		login, err := c.Login(context.Background())
		if err != nil || login != "Octo-Bot" {
			t.Fatalf("Login = %q, %v", login, err)
		}
	}
	if gets.count() != 1 {
		t.Errorf("GET /user %d times, want once", gets.count())
	}
	for login, want := range map[string]bool{"octo-bot": true, "OCTO-BOT": true, "octo-bot[bot]": false, "": false, "stranger": false} {
		t.Run(fmt.Sprintf("%q", login), func(t *testing.T) {
			if got, err := c.Ours(context.Background(), login); err != nil || got != want {
				t.Errorf("Ours(%q) = %v, %v; want %v", login, got, err, want)
			}
		})
	}
}

func TestLogin401(t *testing.T) {
	var gets counter
	c, _ := newTest(t, Options{TrustedAuthors: []string{"my-app[bot]"}},
		route(mock.GetUser, gets.seq(reply(401, fixture(t, "bad-credentials.401.json")), reply(200, user(me)))),
	)
	_, err := c.Login(context.Background())
	noToken(t, err)
	if err == nil || err.Error() != "token rejected by GitHub (401 Bad credentials): check GH_TOKEN" {
		t.Fatalf("err = %v", err)
	}
	// A failed read is not remembered.
	if login, err := c.Login(context.Background()); err != nil || login != me {
		t.Fatalf("second Login = %q, %v", login, err)
	}
	// Finds report the failure as unknown.
	c, _ = newTest(t, Options{}, route(mock.GetUser, reply(401, fixture(t, "bad-credentials.401.json"))))
	wantState(t, c.FindIssue(context.Background(), repo, IssueQuery{Key: keyFor("issue")}), Unknown)
}

// The advice names the option as data: a Go caller is told the field to
// set (Options.TrustedAuthors), never a flag of the CLI; a front, its own
// word for it.
func TestLoginForbiddenNeedsTrustedAuthors(t *testing.T) {
	for _, status := range []int{403, 404} {
		body := fixture(t, "integration.403.json")
		c, _ := newTest(t, Options{}, route(mock.GetUser, reply(status, body)))
		_, err := c.Login(context.Background())
		noToken(t, err)
		var a *effect.AdviceError
		if !errors.As(err, &a) || !errors.Is(err, ErrCredentials) || strings.Contains(err.Error(), "trust") {
			t.Fatalf("%d: err = %v; want credentials advice, its step apart", status, err)
		}
		if got := a.In(nil); !strings.Contains(got, `set TrustedAuthors to "LOGIN"`) || strings.Contains(got, "--") || !strings.Contains(got, "github-actions[bot]") {
			t.Fatalf("%d: in Go's words: %s; want the field TrustedAuthors named, no flag", status, got)
		}
		if got := a.In(flagWords{}); !strings.Contains(got, "--trust-author LOGIN") {
			t.Fatalf("%d: in a CLI's words: %s; want the front's flag", status, got)
		}
		res := c.FindComment(context.Background(), repo, 1, keyFor("c"))
		wantState(t, res, Unknown)

		var gets counter
		c, _ = newTest(t, Options{TrustedAuthors: []string{" github-actions[bot] "}}, route(mock.GetUser, gets.seq(reply(status, body))))
		login, err := c.Login(context.Background())
		if err != nil || login != "" {
			t.Fatalf("%d with trusted authors: Login = %q, %v", status, login, err)
		}
		for login, want := range map[string]bool{"github-actions[bot]": true, "GitHub-Actions[BOT]": true, "github-actions": false, "": false} {
			if got, err := c.Ours(context.Background(), login); err != nil || got != want {
				t.Errorf("Ours(%q) = %v, %v; want %v", login, got, err, want)
			}
		}
		if gets.count() != 1 {
			t.Errorf("GET /user %d times, want once", gets.count())
		}
	}
}

func TestLoginRateLimitIsNotAnIdentityAnswer(t *testing.T) {
	// A 403 secondary limit on /user is waited out, not taken for
	// "this token cannot read /user".
	var gets counter
	c, s := newTest(t, Options{},
		route(mock.GetUser, gets.seq(
			reply(403, fixture(t, "secondary-limit.403.json"), "Retry-After", "5"),
			reply(200, &github.User{Login: github.String(me)}),
		)),
	)
	if login, err := c.Login(context.Background()); err != nil || login != me {
		t.Fatalf("Login = %q, %v", login, err)
	}
	if w := s.waits(); len(w) != 1 || w[0].Seconds() != 5 {
		t.Errorf("waits = %v", w)
	}
}

// flagWords names an option as a CLI's flag.
type flagWords struct{}

func (flagWords) Name(o effect.Option) string {
	return strings.TrimSpace("--" + o.Name + " " + o.Value)
}
func (w flagWords) Set(o effect.Option) string { return "pass " + w.Name(o) }
