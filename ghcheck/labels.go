package ghcheck

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/taskkey"
)

// The key label (taskkey.Label) is how ghonce finds an issue, or a pull
// request whose head changed, again when the ledger is gone.
//
// It is never made on the hot path. GitHub creates a label that does not
// exist when an issue is created with it or it is added to an issue or
// pull request, in the colour KeyLabelColor, so a first create spends no
// write on it: an issue costs one content-creating request, a pull request
// two (the create, then the labels). A look-up never writes either: listing
// issues by a label that does not exist answers an empty list, which proves
// absence as well as a label create answering 201 did. What GitHub does not
// give the label is KeyLabelDescription; DescribeKeyLabels adds it, off the
// hot path (`ghonce labels describe`), so a maintainer reading the label
// list knows it can go once the work has settled (`ghonce labels prune`).
const (
	KeyLabelColor       = "ededed"
	KeyLabelDescription = "ghonce key: finds this artifact again after a crash (safe to delete once settled)"
)

// DescribeKeyLabels gives every key label of repository r (a name starting
// "ghonce:gk") that has no description KeyLabelDescription, and returns
// how many it changed. It reads GET /repos/{o}/{r}/labels, every page, and
// sends one PATCH /repos/{o}/{r}/labels/{name} per bare label: idempotent,
// retried, and never on the way to a create. A label someone described
// otherwise is left alone.
//
// GitHub API docs: https://docs.github.com/rest/issues/labels#update-a-label
func (c *Client) DescribeKeyLabels(ctx context.Context, r Repo) (int, error) {
	var bare []string
	err := c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		ls, resp, err := c.gh.Issues.ListLabels(ctx, r.Owner, r.Name, &github.ListOptions{Page: page, PerPage: 100})
		for _, l := range ls {
			if strings.HasPrefix(strings.ToLower(l.GetName()), keyLabelPrefix) && l.GetDescription() == "" {
				bare = append(bare, l.GetName())
			}
		}
		return resp, err
	})
	if err != nil {
		return 0, c.redact(worded(err, "list labels of "+r.String(), "the token needs read access to the repository"))
	}
	n := 0
	for _, name := range bare {
		err := c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
			_, resp, err := c.gh.Issues.EditLabel(ctx, r.Owner, r.Name, name, &github.Label{
				Color: github.String(KeyLabelColor), Description: github.String(KeyLabelDescription),
			})
			return resp, err
		})
		switch {
		case httpStatus(err) == http.StatusNotFound:
			continue // deleted meanwhile (a prune)
		case err != nil:
			return n, c.redact(worded(err, fmt.Sprintf("describe label %s in %s", name, r), "the token needs write access to the repository's labels (triage or more)"))
		}
		n++
	}
	return n, nil
}

// keyLabelPrefix starts every key label's name, lower-cased.
var keyLabelPrefix = strings.ToLower(taskkey.Label("gk"))

// DeleteKeyLabel deletes key's label from repository r, and with it from
// every issue and pull request that carries it. It reports false, with no
// error, for a label that does not exist (deleted already). DELETE
// /repos/{o}/{r}/labels/{name} is idempotent and retried.
//
// GitHub API docs: https://docs.github.com/rest/issues/labels#delete-a-label
func (c *Client) DeleteKeyLabel(ctx context.Context, r Repo, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, fmt.Errorf("delete label: %w", err)
	}
	name := taskkey.Label(key)
	err := c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		return c.gh.Issues.DeleteLabel(ctx, r.Owner, r.Name, name)
	})
	switch {
	case err == nil:
		return true, nil
	case httpStatus(err) == http.StatusNotFound:
		return false, nil
	}
	return false, c.redact(worded(err, fmt.Sprintf("delete label %s in %s", name, r), "the token needs write access to the repository's labels (triage or more)"))
}
