package ghcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v66/github"
)

// ErrNoOpenPR is OpenPRForHead's error when no open pull request has that head.
var ErrNoOpenPR = errors.New("no open pull request")

// OpenPRForHead returns the number of the open pull request whose head is
// head ("branch" in r's owner, or "owner:branch"), as gh picks the pull
// request of the current branch. It lists GET
// /repos/{o}/{r}/pulls?state=open&head=OWNER:BRANCH (consistent), and
// checks each candidate's head itself: GitHub ignores a malformed filter.
// Any author counts: this names a target, it does not adopt an artifact.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#list-pull-requests
func (c *Client) OpenPRForHead(ctx context.Context, r Repo, head string) (int, error) {
	hs, err := parseHeads(r, []string{head})
	if err != nil {
		return 0, err
	}
	h := hs[0]
	found := 0
	rn := c.newRun()
	err = rn.pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		prs, resp, err := c.gh.PullRequests.List(ctx, r.Owner, r.Name, &github.PullRequestListOptions{
			State: "open", Head: h.owner + ":" + h.branch, ListOptions: github.ListOptions{Page: page, PerPage: 100},
		})
		for _, p := range prs {
			if found == 0 && p.GetHead().GetRef() == h.branch && strings.EqualFold(p.GetHead().GetUser().GetLogin(), h.owner) {
				found = p.GetNumber()
			}
		}
		return resp, err
	})
	switch {
	case err != nil:
		return 0, fmt.Errorf("find the pull request of %s:%s: %w", h.owner, h.branch, c.redact(err))
	case found == 0:
		return 0, fmt.Errorf("find the pull request of %s:%s: %w", h.owner, h.branch, ErrNoOpenPR)
	}
	return found, nil
}
