package reconcile_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"testing"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// htmlComment is what github/gh-aw's safe-output sanitizer and
// claude-code-action's comment server take out of a body.
var htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)

// stripComments is a front that strips HTML comments from what it sends
// to GitHub, as those sanitizers do.
type stripComments struct{ base http.RoundTripper }

func (s stripComments) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.Method != http.MethodGet {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		b = htmlComment.ReplaceAll(b, nil)
		req = req.Clone(req.Context())
		req.Body, req.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
	}
	return s.base.RoundTrip(req)
}

// Issue 28: with the ledger lost, an issue or a comment whose HTML
// comments are gone is still found by a rerun, through the second
// channel (taskkey.LinkMarker): whether they were stripped after it was
// created (a sanitizer's or a person's edit) or before it reached GitHub
// (a front that strips them on the way).
func TestMarkerWithoutHTMLCommentsIsFound(t *testing.T) {
	issue := reconcile.Action{Task: "ISSUE-9", Step: "issue-create", Repo: repo, Spec: reconcile.Issue{Title: "Flaky test", Body: "Seen twice."}}
	for _, when := range []string{"stripped after creation", "stripped on the way"} {
		t.Run(when, func(t *testing.T) {
			w := newWorld(t)
			is := w.GitHub.SeedIssue(owner, name, other, fixtures.SeedIssue{Title: "It crashes"})
			comment := reconcile.Action{Task: "ISSUE-9", Step: "handoff", Repo: repo, Spec: reconcile.Comment{Number: is, Body: "Handing off to the release job."}}
			eng := w.engine()
			if when == "stripped on the way" {
				eng = w.engine(func(c *reconcile.Config) {
					c.GitHub = w.Client(ghcheck.Options{Token: token, HTTPClient: &http.Client{Transport: stripComments{http.DefaultTransport}}})
				})
			}
			ri := mustDo(t, eng, issue)
			rc := mustDo(t, eng, comment)
			gh := github.NewClient(nil).WithAuthToken(token)
			u, err := url.Parse(w.GitHub.URL())
			if err != nil {
				t.Fatal(err)
			}
			gh.BaseURL = u
			if when == "stripped after creation" {
				got, _, err := gh.Issues.Get(w.ctx, owner, name, ri.Number)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := gh.Issues.Edit(w.ctx, owner, name, ri.Number, &github.IssueRequest{Body: github.String(htmlComment.ReplaceAllString(got.GetBody(), ""))}); err != nil {
					t.Fatal(err)
				}
				cm, _, err := gh.Issues.GetComment(w.ctx, owner, name, rc.ID)
				if err != nil {
					t.Fatal(err)
				}
				if _, _, err := gh.Issues.EditComment(w.ctx, owner, name, rc.ID, &github.IssueComment{Body: github.String(htmlComment.ReplaceAllString(cm.GetBody(), ""))}); err != nil {
					t.Fatal(err)
				}
			}
			// What GitHub holds has no HTML comment, and renders the
			// link marker as nothing.
			got, _, err := gh.Issues.Get(w.ctx, owner, name, ri.Number)
			if err != nil {
				t.Fatal(err)
			}
			if htmlComment.MatchString(got.GetBody()) || !taskkey.HasMarker(got.GetBody(), ri.Key) {
				t.Fatalf("issue body %q: want no HTML comment and the key's link marker", got.GetBody())
			}
			if err := os.RemoveAll(w.Ledger); err != nil {
				t.Fatal(err)
			}
			writes := w.writes()
			if r := mustDo(t, w.engine(), issue); r.Outcome != outcome.Found || r.Number != ri.Number || r.PayloadChanged {
				t.Fatalf("rerun of the issue, ledger lost: %+v; want found #%d, unchanged", r, ri.Number)
			}
			if r := mustDo(t, w.engine(), comment); r.Outcome != outcome.Found || r.ID != rc.ID || r.PayloadChanged {
				t.Fatalf("rerun of the comment, ledger lost: %+v; want found %d, unchanged", r, rc.ID)
			}
			if n := w.writes() - writes; n != 0 {
				t.Fatalf("the reruns wrote %d times, want 0", n)
			}
		})
	}
}
