package ghcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
)

func TestBlobSHA(t *testing.T) {
	for in, want := range map[string]string{
		"hello\n": "ce013625030ba8dba906f756967f9e9ca394464a",
		"":        "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391",
	} {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) {
			if got := BlobSHA([]byte(in)); got != want {
				t.Errorf("BlobSHA(%q) = %s, want %s", in, got, want)
			}
		})
	}
}

func fileAt(path string, content []byte) *github.RepositoryContent {
	return &github.RepositoryContent{
		Type:    github.String("file"),
		Path:    github.String(path),
		SHA:     github.String(BlobSHA(content)),
		HTMLURL: github.String("https://github.com/octo/hello/blob/work/" + path),
	}
}

func TestFindFile(t *testing.T) {
	content := []byte("hello\n")
	cases := []struct {
		name string
		h    http.HandlerFunc
		want State
	}{
		{"absent", reply(404, fixture(t, "not-found.404.json")), Absent},
		{"same", reply(200, fileAt("docs/a.md", content)), Found},
		{"other content", reply(200, fileAt("docs/a.md", []byte("old\n"))), Absent},
		{"directory", reply(200, []*github.RepositoryContent{fileAt("docs/a.md/x", nil)}), Conflict},
		{"server error", reply(503, nil), Unknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newTest(t, Options{}, route(getContents, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/repos/octo/hello/contents/docs/a.md" || r.URL.Query().Get("ref") != "work" {
					t.Errorf("got %s", r.URL)
				}
				tc.h(w, r)
			}))
			res := c.FindFile(context.Background(), repo, "work", "docs/a.md", content)
			wantState(t, res, tc.want)
			if tc.want == Found && (res.Artifact.SHA != "ce013625030ba8dba906f756967f9e9ca394464a" || res.Artifact.URL == "") {
				t.Errorf("artifact = %+v", res.Artifact)
			}
		})
	}
}

func TestPutFile(t *testing.T) {
	content := []byte("hello\n")
	putReply := func(sent *map[string]any) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			json.NewDecoder(r.Body).Decode(sent)
			reply(201, &github.RepositoryContentResponse{Content: fileAt("docs/a.md", content)})(w, r)
		}
	}
	t.Run("create", func(t *testing.T) {
		var sent map[string]any
		c, _ := newTest(t, Options{},
			route(getContents, reply(404, fixture(t, "not-found.404.json"))),
			route(putContents, putReply(&sent)),
		)
		a, err := c.PutFile(context.Background(), repo, "work", "docs/a.md", "add a", content, "")
		if err != nil {
			t.Fatal(err)
		}
		if a.SHA != BlobSHA(content) || !strings.HasSuffix(a.URL, "/docs/a.md") {
			t.Errorf("artifact = %+v", a)
		}
		if sent["content"] != "aGVsbG8K" || sent["branch"] != "work" || sent["message"] != "add a" || sent["sha"] != nil {
			t.Errorf("sent %v", sent)
		}
	})
	t.Run("update sends the current sha", func(t *testing.T) {
		var sent map[string]any
		c, _ := newTest(t, Options{},
			route(getContents, reply(200, fileAt("docs/a.md", []byte("old\n")))),
			route(putContents, putReply(&sent)),
		)
		if _, err := c.PutFile(context.Background(), repo, "work", "docs/a.md", "update a", content, ""); err != nil {
			t.Fatal(err)
		}
		if sent["sha"] != BlobSHA([]byte("old\n")) {
			t.Errorf("sent sha %v", sent["sha"])
		}
	})
	t.Run("already there", func(t *testing.T) {
		var puts counter
		c, _ := newTest(t, Options{},
			route(getContents, reply(200, fileAt("docs/a.md", content))),
			route(putContents, puts.seq(reply(500, nil))),
		)
		a, err := c.PutFile(context.Background(), repo, "work", "docs/a.md", "m", content, "")
		if err != nil || a.SHA != BlobSHA(content) || puts.count() != 0 {
			t.Fatalf("PutFile = %+v, %v after %d puts", a, err, puts.count())
		}
	})
	for _, f := range []string{"sha-mismatch.409.json", "sha-missing.422.json"} {
		t.Run(f, func(t *testing.T) {
			status := 409
			if strings.Contains(f, "422") {
				status = 422
			}
			c, _ := newTest(t, Options{},
				route(getContents, reply(404, fixture(t, "not-found.404.json"))),
				route(putContents, reply(status, fixture(t, f))),
			)
			_, err := c.PutFile(context.Background(), repo, "work", "docs/a.md", "m", content, "")
			if cl := classOf(t, err); cl != ClassRefused || !strings.Contains(err.Error(), "rerun") {
				t.Fatalf("class = %v, err = %v", cl, err)
			}
		})
	}
	// With replaces, a file changed since the caller read it is refused with
	// nothing sent; the intended content already there is still done; the
	// SHA that matches is the one the PUT names.
	t.Run("replaces", func(t *testing.T) {
		old := []byte("old\n")
		var puts counter
		c, _ := newTest(t, Options{},
			route(getContents, reply(200, fileAt("docs/a.md", old))),
			route(putContents, puts.seq(reply(200, []byte(`{"content":{"sha":"`+BlobSHA(content)+`"}}`)))),
		)
		stale := BlobSHA([]byte("what the caller read\n"))
		_, err := c.PutFile(context.Background(), repo, "work", "docs/a.md", "m", content, stale)
		if cl := classOf(t, err); cl != ClassRefused || !strings.Contains(err.Error(), "changed it since") || puts.count() != 0 {
			t.Fatalf("stale replaces: class %v, err %v, %d puts; want refused, nothing sent", cl, err, puts.count())
		}
		if a, err := c.PutFile(context.Background(), repo, "work", "docs/a.md", "m", content, BlobSHA(old)); err != nil || puts.count() != 1 || a.SHA != BlobSHA(content) {
			t.Fatalf("matching replaces: %+v, %v, %d puts; want one put", a, err, puts.count())
		}
		c2, _ := newTest(t, Options{}, route(getContents, reply(200, fileAt("docs/a.md", content))))
		if _, err := c2.PutFile(context.Background(), repo, "work", "docs/a.md", "m", content, stale); err != nil {
			t.Fatalf("content already there, stale replaces: %v; want done (a rerun after a crash)", err)
		}
		c3, _ := newTest(t, Options{}, route(getContents, reply(404, fixture(t, "not-found.404.json"))))
		if _, err := c3.PutFile(context.Background(), repo, "work", "docs/a.md", "m", content, stale); classOf(t, err) != ClassRefused {
			t.Fatalf("missing file with replaces: %v; want refused", err)
		}
	})
	t.Run("read fails", func(t *testing.T) {
		c, _ := newTest(t, Options{}, route(getContents, reply(401, fixture(t, "bad-credentials.401.json"))))
		_, err := c.PutFile(context.Background(), repo, "work", "docs/a.md", "m", content, "")
		if cl := classOf(t, err); cl != ClassNotSent {
			t.Fatalf("class = %v, want not sent", cl)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		c, _ := newTest(t, Options{})
		for _, in := range [][3]string{{"work", "/abs", "m"}, {"work", "", "m"}, {"bad..b", "a", "m"}, {"work", "a", " "}} {
			_, err := c.PutFile(context.Background(), repo, in[0], in[1], in[2], content, "")
			if cl := classOf(t, err); cl != ClassRefused {
				t.Errorf("%q: class = %v", in, cl)
			}
		}
	})
}
