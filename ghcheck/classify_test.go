package ghcheck

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"
)

// answer turns a recorded status, headers and body into the error go-github
// v66 makes of it.
func answer(t *testing.T, status int, body []byte, header ...string) error {
	t.Helper()
	req, _ := http.NewRequest("POST", "https://api.github.com/repos/octo/hello/things", nil)
	resp := &http.Response{
		StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body)), Request: req,
	}
	for i := 0; i+1 < len(header); i += 2 {
		resp.Header.Set(header[i], header[i+1])
	}
	err := github.CheckResponse(resp)
	if err == nil {
		t.Fatalf("CheckResponse(%d) = nil", status)
	}
	return err
}

func TestClassify(t *testing.T) {
	reset := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	cases := []struct {
		name string
		err  error
		want Class
	}{
		{"ref exists, no errors array", answer(t, 422, fixture(t, "ref-exists.422.json")), ClassExists},
		{"open pull request exists", answer(t, 422, fixture(t, "pr-exists.422.json")), ClassExists},
		{"label exists", answer(t, 422, fixture(t, "label-exists.422.json")), ClassExists},
		{"release asset exists (octokit fixture)", answer(t, 422, fixture(t, "release-asset-exists.422.json")), ClassExists},
		{"invalid field (octokit fixture)", answer(t, 422, fixture(t, "label-color-invalid.422.json")), ClassRefused},
		{"sha missing", answer(t, 422, fixture(t, "sha-missing.422.json")), ClassRefused},
		{"sha mismatch", answer(t, 409, fixture(t, "sha-mismatch.409.json")), ClassRefused},
		{"bad credentials", answer(t, 401, fixture(t, "bad-credentials.401.json")), ClassRefused},
		{"not accessible", answer(t, 403, fixture(t, "integration.403.json")), ClassRefused},
		{"not found", answer(t, 404, fixture(t, "not-found.404.json")), ClassRefused},
		{"429", answer(t, 429, fixture(t, "too-many.429.json"), "Retry-After", "60"), ClassRefused},
		{"secondary limit", answer(t, 403, fixture(t, "secondary-limit.403.json"), "Retry-After", "60"), ClassRefused},
		{"primary limit", answer(t, 403, fixture(t, "primary-limit.403.json"), "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset), ClassRefused},
		{"422 on a 5xx-looking body", answer(t, 422, []byte("not json")), ClassRefused},
		{"502", answer(t, 502, fixture(t, "server.502.json")), ClassMaybe},
		{"500 without body", answer(t, 500, nil), ClassMaybe},
		{"202 accepted", answer(t, 202, nil), ClassMaybe},
		{"dial refused", &url.Error{Op: "Post", URL: "https://api.github.com/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}, ClassNotSent},
		{"proxy connect", &url.Error{Op: "Post", URL: "https://api.github.com/", Err: &net.OpError{Op: "proxyconnect", Net: "tcp", Err: syscall.ECONNREFUSED}}, ClassNotSent},
		{"host does not resolve", &url.Error{Op: "Post", URL: "https://api.example.invalid/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "api.example.invalid", IsNotFound: true}}}, ClassNotSent},
		{"bad TLS record after the handshake", &url.Error{Op: "Post", URL: "https://api.github.com/", Err: tls.RecordHeaderError{Msg: "oversized record"}}, ClassMaybe},
		{"TLS alert (may follow the request in TLS 1.3)", &url.Error{Op: "Post", URL: "https://api.github.com/", Err: tls.AlertError(116)}, ClassMaybe},
		{"reset while reading", &url.Error{Op: "Post", URL: "https://api.github.com/", Err: &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}}, ClassMaybe},
		{"EOF", &url.Error{Op: "Post", URL: "https://api.github.com/", Err: io.EOF}, ClassMaybe},
		{"timeout", context.DeadlineExceeded, ClassMaybe},
		{"cancelled (sent or not, unknown here)", context.Canceled, ClassMaybe},
		{"marked not sent", &notSentError{errors.New("x")}, ClassNotSent},
		{"create error keeps its class", fmt.Errorf("wrapped: %w", &CreateError{Class: ClassExists, Err: errors.New("x")}), ClassExists},
		{"path with ..", github.ErrPathForbidden, ClassNotSent},
		{"anything else", errors.New("strange"), ClassMaybe},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Classify(tc.err); got != tc.want {
				t.Errorf("%s: Classify(%T %v) = %v, want %v", tc.name, tc.err, tc.err, got, tc.want)
			}
		})
	}
	if Classify(nil) != 0 {
		t.Error("Classify(nil) != 0")
	}
}

// TestClassifyGoGithubLocalRefusal makes go-github v66 itself refuse a
// request before a known reset, and checks that the bare error (without
// this package's transport marking) classifies as not sent.
func TestClassifyGoGithubLocalRefusal(t *testing.T) {
	reset := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	var gets counter
	hc := mock.NewMockedHTTPClient(route(mock.GetUser, gets.seq(
		reply(403, fixture(t, "primary-limit.403.json"), "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset),
	)))
	gh := github.NewClient(hc)
	_, _, real := gh.Users.Get(context.Background(), "")
	_, _, local := gh.Users.Get(context.Background(), "")
	if gets.count() != 1 {
		t.Fatalf("go-github sent %d requests, want 1 (then a local refusal)", gets.count())
	}
	if got := Classify(real); got != ClassRefused {
		t.Errorf("real 403: %v", got)
	}
	if got := Classify(local); got != ClassNotSent {
		t.Errorf("local refusal %v: %v", local, got)
	}

	// The same for a secondary limit.
	gets = counter{}
	hc = mock.NewMockedHTTPClient(route(mock.GetUser, gets.seq(
		reply(403, fixture(t, "secondary-limit.403.json"), "Retry-After", "600"),
	)))
	gh = github.NewClient(hc)
	_, _, real = gh.Users.Get(context.Background(), "")
	_, _, local = gh.Users.Get(context.Background(), "")
	if gets.count() != 1 || Classify(real) != ClassRefused || Classify(local) != ClassNotSent {
		t.Errorf("secondary: %d requests, real %v, local %v", gets.count(), Classify(real), Classify(local))
	}
}

// TestBypassKey pins the go-github v66 context key used after this
// package has waited for a limit itself.
func TestBypassKey(t *testing.T) {
	reset := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	var gets counter
	hc := mock.NewMockedHTTPClient(route(mock.GetUser, gets.seq(
		reply(403, fixture(t, "primary-limit.403.json"), "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", reset),
		reply(200, user(me)),
	)))
	gh := github.NewClient(hc)
	gh.Users.Get(context.Background(), "")
	u, _, err := gh.Users.Get(context.WithValue(context.Background(), bypassLocalLimit, true), "")
	if err != nil || u.GetLogin() != me || gets.count() != 2 {
		t.Fatalf("bypass did not reach the server: %v, %d requests", err, gets.count())
	}
}

// Real handshake failures on loopback, as net/http reports them: a server
// whose certificate is not trusted, and a server that does not speak TLS.
// Neither saw a request, and both classify as not sent.
func TestClassifyHandshakeFailuresAreNotSent(t *testing.T) {
	var requests int
	count := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests++ })
	untrusted := httptest.NewUnstartedServer(count)
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	untrusted.StartTLS()
	defer untrusted.Close()
	plain := httptest.NewServer(count)
	defer plain.Close()
	for name, u := range map[string]string{
		"untrusted certificate": untrusted.URL,
		"not a TLS server":      "https://" + plain.Listener.Addr().String(),
	} {
		t.Run(name, func(t *testing.T) {
			resp, err := http.Post(u+"/repos/o/r/issues", "application/json", bytes.NewReader([]byte("{}")))
			if err == nil {
				resp.Body.Close()
				t.Fatalf("%s: the request succeeded", name)
			}
			if got := Classify(err); got != ClassNotSent {
				t.Errorf("%s: Classify(%v) = %v, want not sent", name, err, got)
			}
		})
	}
	if requests != 0 {
		t.Errorf("the servers saw %d requests, want 0", requests)
	}
}
