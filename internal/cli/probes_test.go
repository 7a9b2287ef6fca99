package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/observe"
)

// syncBuffer is a stderr a running server writes while a test reads it.
type syncBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	addr chan string // the server's address, once it says it
}

var servingAt = regexp.MustCompile(`serving MCP \(Streamable HTTP\) at (http://\S+)/mcp`)

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.b.Write(p)
	if m := servingAt.FindSubmatch(s.b.Bytes()); m != nil && s.addr != nil {
		s.addr <- string(m[1])
		s.addr = nil
	}
	return n, err
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveMCP runs `ghonce mcp --http 127.0.0.1:0` in process on w, its clock
// stopped at now, and returns its base URL and a stop that returns its
// exit code and stderr once it has returned.
func (w *cliWorld) serveMCP(now time.Time, extra map[string]string) (base string, stop func() (int, string)) {
	w.t.Helper()
	sys, _, _ := w.io("", extra)
	addr := make(chan string, 1)
	errb := &syncBuffer{addr: addr}
	sys.Err, sys.Now = errb, func() time.Time { return now }
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() { code <- Main(ctx, []string{"mcp", "--task", "T", "--http", "127.0.0.1:0"}, sys) }()
	select {
	case base = <-addr:
	case c := <-code:
		cancel()
		w.t.Fatalf("ghonce mcp --http exited %d before serving:\n%s", c, errb.String())
	}
	var once sync.Once
	var exit int
	stop = func() (int, string) {
		once.Do(func() { cancel(); exit = <-code })
		return exit, errb.String()
	}
	w.t.Cleanup(func() { stop() })
	return base, stop
}

func probe(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// On the repository ledger, /healthz and /metrics cost GitHub nothing per
// probe or scrape (and /metrics counts every kind and outcome from the
// start): once the server's one read of the ledger is in (the
// gauges appear), 100 probes and 100 scrapes send GitHub no request, and
// every probe answers 200.
func TestProbesAndScrapesCostNoGitHubRequests(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	if r := w.run("", nil, "issue", "create", "--task", "T", "--title", "t", "--body", "b"); r.code != 0 {
		t.Fatalf("issue create: exit %d\n%s", r.code, r.stderr)
	}
	before := len(w.fake.Requests())
	base, stop := w.serveMCP(time.Now(), nil)
	scrape := func() string {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	// Before any call, every kind and outcome is counted at 0, so that
	// increase() sees the first unconfirmed action.
	first := scrape()
	for _, k := range kinds.All() {
		for _, o := range once.Outcomes {
			if want := fmt.Sprintf("%s{kind=%q,outcome=%q} 0\n", observe.ActionsTotal, k, o); !strings.Contains(first, want) {
				t.Errorf("/metrics before any call lacks %s", want)
			}
		}
	}
	scrapes := 1
	for ; !strings.Contains(scrape(), observe.LedgerAttempting+" 0"); scrapes++ {
		if scrapes == 10_000 {
			t.Fatal("the ledger gauges never appeared in /metrics")
		}
	}
	read := len(w.fake.Requests())
	for range 100 {
		if st := probe(t, base+"/healthz"); st != 200 {
			t.Fatalf("/healthz: %d, want 200", st)
		}
		scrape()
	}
	after := len(w.fake.Requests())
	if code, stderr := stop(); code != 0 {
		t.Fatalf("ghonce mcp --http: exit %d\n%s", code, stderr)
	}
	t.Logf("GitHub requests: %d to start and read the ledger once (%d scrapes until its gauges appeared), %d for 100 probes and 100 scrapes after", read-before, scrapes, after-read)
	if after != read {
		t.Fatalf("100 probes and 100 scrapes cost %d GitHub requests, want none", after-read)
	}
}
