package ghcheck

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"
)

const (
	sha1a = "1111111111111111111111111111111111111111"
	sha1b = "2222222222222222222222222222222222222222"
)

func ref(name, sha string) *github.Reference {
	return &github.Reference{Ref: github.String("refs/heads/" + name), Object: &github.GitObject{SHA: github.String(sha)}}
}

func compare(status string) http.HandlerFunc {
	return reply(200, &github.CommitsComparison{Status: github.String(status)})
}

func TestFindBranch(t *testing.T) {
	cases := []struct {
		name    string
		routes  []mock.MockBackendOption
		want    State
		wantSHA string
	}{
		{"absent", []mock.MockBackendOption{route(getRefHeads, reply(404, fixture(t, "not-found.404.json")))}, Absent, ""},
		{"at our commit", []mock.MockBackendOption{route(getRefHeads, reply(200, ref("ghonce/t-1", strings.ToUpper(sha1a))))}, Found, sha1a},
		{"pushed on top", []mock.MockBackendOption{
			route(getRefHeads, reply(200, ref("ghonce/t-1", sha1b))),
			route(mock.GetReposCompareByOwnerByRepoByBasehead, func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasSuffix(r.URL.Path, "/compare/"+sha1a+"..."+sha1b) {
					t.Errorf("compare %s", r.URL.Path)
				}
				compare("ahead")(w, r)
			}),
		}, Found, sha1b},
		{"diverged", []mock.MockBackendOption{
			route(getRefHeads, reply(200, ref("ghonce/t-1", sha1b))),
			route(mock.GetReposCompareByOwnerByRepoByBasehead, compare("diverged")),
		}, Conflict, ""},
		{"behind", []mock.MockBackendOption{
			route(getRefHeads, reply(200, ref("ghonce/t-1", sha1b))),
			route(mock.GetReposCompareByOwnerByRepoByBasehead, compare("behind")),
		}, Conflict, sha1b},
		{"unrelated history", []mock.MockBackendOption{
			route(getRefHeads, reply(200, ref("ghonce/t-1", sha1b))),
			route(mock.GetReposCompareByOwnerByRepoByBasehead, reply(404, []byte(`{"message":"No common ancestor between `+sha1a+` and `+sha1b+`.","documentation_url":"https://docs.github.com/rest/commits/commits#compare-two-commits","status":"404"}`))),
		}, Conflict, ""},
		{"compare fails", []mock.MockBackendOption{
			route(getRefHeads, reply(200, ref("ghonce/t-1", sha1b))),
			route(mock.GetReposCompareByOwnerByRepoByBasehead, reply(404, fixture(t, "not-found.404.json"))),
		}, Unknown, ""},
		{"start commit missing", []mock.MockBackendOption{
			route(getRefHeads, reply(200, ref("ghonce/t-1", sha1b))),
			route(mock.GetReposCompareByOwnerByRepoByBasehead, reply(404, fixture(t, "not-found.404.json"))),
			route(mock.GetReposCommitsByOwnerByRepoByRef, reply(422, []byte(`{"message":"No commit found for SHA: `+sha1a+`","documentation_url":"https://docs.github.com/rest/commits/commits#get-a-commit","status":"422"}`))),
		}, Conflict, ""},
		{"prefix answer", []mock.MockBackendOption{route(getRefHeads, reply(200, ref("ghonce/t-10", sha1a)))}, Unknown, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTest(t, Options{}, tc.routes...)
			res := c.FindBranch(context.Background(), repo, "ghonce/t-1", sha1a)
			wantState(t, res, tc.want)
			if res.Artifact.SHA != tc.wantSHA {
				t.Errorf("sha = %q, want %q", res.Artifact.SHA, tc.wantSHA)
			}
			if tc.want == Found && res.Artifact.URL != "https://github.com/octo/hello/tree/ghonce/t-1" {
				t.Errorf("url = %q", res.Artifact.URL)
			}
			if tc.want == Conflict && tc.name == "start commit missing" {
				if !strings.Contains(res.Err.Error(), "start commit "+sha1a+" does not exist") {
					t.Errorf("err = %v, want it to say the start commit does not exist", res.Err)
				}
				return
			}
			if tc.name == "behind" {
				// At an earlier commit than the start: an earlier head of the
				// start, which the engine may take for an earlier attempt's.
				if !errors.Is(res.Err, ErrBranchBehind) {
					t.Errorf("err = %v, want ErrBranchBehind", res.Err)
				}
				return
			}
			if tc.want == Conflict && !strings.Contains(res.Err.Error(), "does not descend from "+sha1a+"; it is someone else's: choose another name or delete it") {
				t.Errorf("err = %v", res.Err)
			}
		})
	}
}

func TestCreateBranch(t *testing.T) {
	var sent struct{ Ref, SHA string }
	c, _ := newTest(t, Options{},
		route(mock.PostReposGitRefsByOwnerByRepo, func(w http.ResponseWriter, r *http.Request) {
			json.NewDecoder(r.Body).Decode(&sent)
			reply(201, ref("ghonce/t-1", sent.SHA))(w, r)
		}),
	)
	a, err := c.CreateBranch(context.Background(), repo, "ghonce/t-1", sha1a)
	if err != nil {
		t.Fatal(err)
	}
	if sent.Ref != "refs/heads/ghonce/t-1" || sent.SHA != sha1a || a.SHA != sha1a {
		t.Errorf("sent %+v, artifact %+v", sent, a)
	}
}

func TestCreateBranchExists(t *testing.T) {
	c, _ := newTest(t, Options{},
		route(mock.PostReposGitRefsByOwnerByRepo, reply(422, fixture(t, "ref-exists.422.json"))),
	)
	_, err := c.CreateBranch(context.Background(), repo, "ghonce/t-1", sha1a)
	if cl := classOf(t, err); cl != ClassExists {
		t.Fatalf("class = %v (%v), want exists", cl, err)
	}
	_, err = c.CreateBranch(context.Background(), repo, "bad..name", sha1a)
	if cl := classOf(t, err); cl != ClassRefused {
		t.Fatalf("bad name: class = %v, want refused", cl)
	}
}

func TestResolveCommit(t *testing.T) {
	c, _ := newTest(t, Options{},
		route(getCommit, func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/commits/release/v1") || !strings.Contains(r.Header.Get("Accept"), "sha") {
				t.Errorf("got %s (Accept %s)", r.URL.Path, r.Header.Get("Accept"))
			}
			w.Write([]byte(strings.ToUpper(sha1b)))
		}),
	)
	sha, err := c.ResolveCommit(context.Background(), repo, "release/v1")
	if err != nil || sha != sha1b {
		t.Fatalf("ResolveCommit = %q, %v", sha, err)
	}

	c, _ = newTest(t, Options{}, route(getCommit, reply(422, []byte(`{"message":"No commit found for SHA: nope"}`))))
	_, err = c.ResolveCommit(context.Background(), repo, "nope")
	noToken(t, err)
	if err == nil || !strings.Contains(err.Error(), "no such branch, tag or commit") {
		t.Fatalf("err = %v", err)
	}
	// A missing commit is bad input, not a token that cannot be used.
	if errors.Is(err, ErrCredentials) {
		t.Errorf("a missing commit matches ErrCredentials: %v", err)
	}
}
