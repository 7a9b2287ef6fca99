package ghcheck

import (
	"context"
	"fmt"
	"net/http"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/taskkey"
)

// The key label (taskkey.Label) is how ghonce finds an issue, or a pull
// request whose head changed, again when the ledger is gone. It gets one
// look in every repository: a neutral colour and a description saying
// what it is, so a maintainer reading the label list knows it can go once
// the work has settled (`ghonce labels prune`).
const (
	KeyLabelColor       = "ededed"
	KeyLabelDescription = "ghonce key: finds this artifact again after a crash (safe to delete once settled)"
)

// labelState is what ensureKeyLabel learned of the key's label.
type labelState int

const (
	labelUnknown labelState = iota // the create failed: nothing learned
	labelCreated                   // GitHub made it now: it did not exist
	labelExisted                   // it exists (already_exists, or made earlier by this client)
)

// ensureKeyLabel creates key's label with its colour and description,
// before anything is labelled with it (GitHub would otherwise create it
// bare), once per client. POST /repos/{o}/{r}/labels answers 422
// already_exists for a label that exists, which is fine, so it is retried
// like a read. Failing is not an error: labelling creates the label
// anyway, without the description.
//
// GitHub API docs: https://docs.github.com/rest/issues/labels#create-a-label
func (c *Client) ensureKeyLabel(ctx context.Context, r Repo, key string) labelState {
	memo := r.String() + "\x00" + key
	if _, ok := c.keyLabels.Load(memo); ok {
		return labelExisted
	}
	st := labelUnknown
	_ = c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.gh.Issues.CreateLabel(ctx, r.Owner, r.Name, &github.Label{
			Name: github.String(taskkey.Label(key)), Color: github.String(KeyLabelColor), Description: github.String(KeyLabelDescription),
		})
		switch {
		case err == nil:
			st = labelCreated
		case Classify(err) == ClassExists:
			st, err = labelExisted, nil
		}
		return resp, err
	})
	if st != labelUnknown {
		c.keyLabels.Store(memo, true)
	}
	return st
}

// keyLabelIsNew, when probe is set, makes key's label and reports whether
// GitHub had to create it (201): then nothing carries it yet, and a look-up
// by label would answer nothing, so the caller skips it. The create needs
// the label anyway, so the write replaces a read.
func (c *Client) keyLabelIsNew(ctx context.Context, r Repo, key string, probe bool) bool {
	return probe && c.ensureKeyLabel(ctx, r, key) == labelCreated
}

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
