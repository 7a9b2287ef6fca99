package fakegithub

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/tests/fgtest"
)

func gitBlobSHA(b []byte) string {
	h := sha1.Sum(append([]byte(fmt.Sprintf("blob %d\x00", len(b))), b...))
	return hex.EncodeToString(h[:])
}

func TestContentsCreateGetUpdate(t *testing.T) {
	s, gh := newTest(t, Options{})
	fgtest.FeatureBranch(t, s, "agent/fix")
	before, _ := s.Branch(owner, name, "agent/fix")
	content := []byte(strings.Repeat("line of text\n", 20))
	res, resp, err := gh.Repositories.CreateFile(t.Context(), owner, name, "docs/notes.md", &github.RepositoryContentFileOptions{
		Message: github.String("add notes"), Content: content, Branch: github.String("agent/fix"),
	})
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create = %v %v", resp, err)
	}
	if res.Content.GetSHA() != gitBlobSHA(content) || res.Content.GetPath() != "docs/notes.md" || res.Content.GetName() != "notes.md" || res.Content.GetType() != "file" {
		t.Fatalf("content = %+v", res.Content)
	}
	head, _ := s.Branch(owner, name, "agent/fix")
	if res.Commit.GetSHA() != head || len(res.Commit.Parents) != 1 || res.Commit.Parents[0].GetSHA() != before || res.Commit.GetMessage() != "add notes" {
		t.Fatalf("commit = %+v (branch at %s, was %s)", res.Commit, head, before)
	}
	if got, ok := s.FileContent(owner, name, "agent/fix", "docs/notes.md"); !ok || string(got) != string(content) {
		t.Fatalf("FileContent = %q %v", got, ok)
	}
	if _, ok := s.FileContent(owner, name, "main", "docs/notes.md"); ok {
		t.Fatal("file leaked onto main")
	}

	fc, _, _, err := gh.Repositories.GetContents(t.Context(), owner, name, "docs/notes.md", &github.RepositoryContentGetOptions{Ref: "agent/fix"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := fc.GetContent()
	if err != nil || got != string(content) || fc.GetSHA() != gitBlobSHA(content) || fc.GetEncoding() != "base64" {
		t.Fatalf("GetContents = %q %v %+v", got, err, fc)
	}
	if fc.Content == nil || !strings.Contains(*fc.Content, "\n") {
		t.Fatal("base64 content is not wrapped like GitHub's")
	}
	_, _, _, err = gh.Repositories.GetContents(t.Context(), owner, name, "docs/notes.md", nil)
	fgtest.ErrorResponse(t, err, 404) // not on the default branch
	_, dir, _, err := gh.Repositories.GetContents(t.Context(), owner, name, "", &github.RepositoryContentGetOptions{Ref: "agent/fix"})
	if err != nil || len(dir) != 2 || dir[0].GetName() != "README.md" || dir[1].GetName() != "docs" || dir[1].GetType() != "dir" {
		t.Fatalf("root listing = %v %v", dir, err)
	}

	// Updating needs the current blob sha.
	upd := func(sha *string) error {
		_, _, err := gh.Repositories.UpdateFile(t.Context(), owner, name, "docs/notes.md", &github.RepositoryContentFileOptions{
			Message: github.String("update"), Content: []byte("new"), Branch: github.String("agent/fix"), SHA: sha,
		})
		return err
	}
	if er := fgtest.ErrorResponse(t, upd(nil), 422); er.Message != "Invalid request.\n\n\"sha\" wasn't supplied." {
		t.Fatalf("no sha = %q", er.Message)
	}
	if er := fgtest.ErrorResponse(t, upd(github.String(head)), 409); er.Message != "docs/notes.md does not match "+head {
		t.Fatalf("wrong sha = %q", er.Message)
	}
	if err := upd(github.String(gitBlobSHA(content))); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.FileContent(owner, name, "agent/fix", "docs/notes.md"); string(got) != "new" {
		t.Fatalf("after update = %q", got)
	}
}

func TestContentsErrors(t *testing.T) {
	s, gh := newTest(t, Options{})
	_, _, err := gh.Repositories.CreateFile(t.Context(), owner, name, "a.txt", &github.RepositoryContentFileOptions{
		Message: github.String("m"), Content: []byte("x"), Branch: github.String("nope"),
	})
	fgtest.ErrorResponse(t, err, 404)
	_, _, _, err = gh.Repositories.GetContents(t.Context(), owner, name, "README.md", &github.RepositoryContentGetOptions{Ref: "nope"})
	fgtest.ErrorResponse(t, err, 404)
	r := fgtest.Do(t, s, token, "PUT", "/repos/octo/hello/contents/a.txt", `{"message":"m","content":"!!!"}`)
	if r.Status != 422 {
		t.Fatalf("bad base64 = %d %s", r.Status, r.Body)
	}
	r = fgtest.Do(t, s, token, "PUT", "/repos/octo/hello/contents/a.txt", `{"content":"eA=="}`)
	if r.Status != 422 || !strings.Contains(string(r.Body), "message") {
		t.Fatalf("no message = %d %s", r.Status, r.Body)
	}
	// Creating ignores sha; the default branch is used without one.
	r = fgtest.Do(t, s, token, "PUT", "/repos/octo/hello/contents/a.txt", `{"message":"m","content":"eA==","sha":"deadbeef"}`)
	if r.Status != 201 {
		t.Fatalf("create with a stray sha = %d %s", r.Status, r.Body)
	}
	if got, ok := s.FileContent(owner, name, "main", "a.txt"); !ok || string(got) != "x" {
		t.Fatalf("a.txt on main = %q %v", got, ok)
	}
	r = fgtest.Do(t, s, token, "GET", "/repos/octo/hello/contents/README.md", "")
	if r.Status != 200 || r.JSON(t)["sha"] != gitBlobSHA([]byte("# hello\n")) {
		t.Fatalf("README = %d %s", r.Status, r.Body)
	}
}
