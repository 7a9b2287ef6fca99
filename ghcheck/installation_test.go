package ghcheck

import (
	"context"
	"testing"

	"github.com/migueleliasweb/go-github-mock/src/mock"
)

// InstallationAuthors count only for a token that cannot read /user: with
// a personal token inside Actions, github-actions[bot]'s artifacts are not
// ours.
func TestInstallationAuthorsOnlyForInstallationTokens(t *testing.T) {
	opts := Options{InstallationAuthors: []string{"github-actions[bot]"}}
	pat, _ := newTest(t, opts, route(mock.GetUser, reply(200, user(me))))
	inst, _ := newTest(t, opts, route(mock.GetUser, reply(403, fixture(t, "integration.403.json"))))
	for _, c := range []struct {
		name string
		c    *Client
		want map[string]bool
	}{
		{"personal token", pat, map[string]bool{me: true, "github-actions[bot]": false}},
		{"installation token", inst, map[string]bool{me: false, "github-actions[bot]": true, "GitHub-Actions[bot]": true, "mallory": false}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for login, want := range c.want {
				if got, err := c.c.Ours(context.Background(), login); err != nil || got != want {
					t.Errorf("%s: Ours(%q) = %v, %v; want %v", c.name, login, got, err, want)
				}
			}
		})
	}
}
