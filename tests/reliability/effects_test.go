package reliability

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"time"
)

// effects is the outside service a guarded command (`ghonce exec`) talks
// to, standing in for Slack or a deploy hook: POST /effect?key=K records
// one effect (it does not dedupe: a second POST is a second message), GET
// /effect?key=K says whether one exists. Its handler calls the world's
// hook before and after it records, where the kill points of the exec
// kind land, exactly as the fake GitHub's hooks do for the other kinds.
type effects struct {
	w   *world
	srv *httptest.Server

	mu     sync.Mutex
	counts map[string]int
	posted chan string // every recorded key, for a test that waits on one
	// gate holds a command that the world's hook killed the parent of
	// (see serveGate).
	gate chan struct{}
	// orphan reports what became of the held command: "dead" (it died with
	// ghonce) or "released" (it lived on and was let go).
	orphan chan string
}

func newEffects(w *world) *effects {
	fx := &effects{w: w, counts: map[string]int{}, posted: make(chan string, 1024), orphan: make(chan string, 1)}
	fx.srv = httptest.NewServer(http.HandlerFunc(fx.serve))
	return fx
}

func (fx *effects) url() string { return fx.srv.URL + "/effect" }
func (fx *effects) close()      { fx.srv.Close() }

func (fx *effects) count(key string) int {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return fx.counts[key]
}

// serveGate is GET /effect/gate, which the command calls first: its slow
// work before the side effect. If the world's hook kills ghonce here (the
// "gate" kill), the command is held until the matrix releases it, after
// ghonce's rerun has run; a command that died with ghonce is reported dead.
func (fx *effects) serveGate(w http.ResponseWriter, r *http.Request) {
	if !fx.w.onEffect("gate") {
		fx.mu.Lock()
		gate := fx.gate
		fx.mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
		}
		if r.Context().Err() != nil {
			fx.orphan <- "dead"
			return
		}
		fx.orphan <- "released"
	}
	fmt.Fprintln(w, "go on")
}

// holdGate arms the gate for the next kill and returns its release.
func (fx *effects) holdGate() (release func()) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	fx.gate = make(chan struct{})
	g := fx.gate
	return sync.OnceFunc(func() { close(g) })
}

func (fx *effects) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/effect/gate" {
		fx.serveGate(w, r)
		return
	}
	key := r.URL.Query().Get("key")
	if key == "" {
		http.Error(w, "no key", http.StatusBadRequest)
		return
	}
	switch r.Method {
	case http.MethodGet:
		if n := fx.count(key); n > 0 {
			fmt.Fprintf(w, "effect %s recorded %d time(s)\n", key, n)
			return
		}
		http.Error(w, "no effect", http.StatusNotFound)
	case http.MethodPost:
		if !fx.w.onEffect("before") {
			// Abandoned in flight: nothing recorded, no answer.
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		fx.mu.Lock()
		fx.counts[key]++
		fx.mu.Unlock()
		select {
		case fx.posted <- key:
		default:
		}
		fx.w.onEffect("after")
		fmt.Fprintln(w, "recorded")
	default:
		http.Error(w, "method", http.StatusMethodNotAllowed)
	}
}

// helperArg is the first argument that makes this test binary act as the
// guarded command instead of running tests (see TestMain).
const helperArg = "ghonce-matrix-effect"

// EffectMain is the guarded command: "post" records the effect for
// $GHONCE_KEY at $GHONCE_MATRIX_EFFECT_URL (exit 0 when recorded, 1 when
// refused, 2 when the service could not be reached); "check" is its --check
// (exit 0 and a line when it exists, 1 when not, 2 when it cannot tell).
func EffectMain(args []string) int {
	key, base := os.Getenv("GHONCE_KEY"), os.Getenv("GHONCE_MATRIX_EFFECT_URL")
	if key == "" || base == "" || len(args) != 1 {
		fmt.Fprintln(os.Stderr, "effect: need GHONCE_KEY, GHONCE_MATRIX_EFFECT_URL and post|check")
		return 2
	}
	u := base + "?key=" + url.QueryEscape(key)
	c := &http.Client{Timeout: time.Minute}
	var resp *http.Response
	var err error
	switch args[0] {
	case "post":
		gate, gerr := c.Get(base + "/gate?key=" + url.QueryEscape(key))
		if gerr != nil {
			fmt.Fprintln(os.Stderr, "effect:", gerr)
			return 2
		}
		gate.Body.Close()
		resp, err = c.Post(u, "text/plain", nil)
	case "check":
		resp, err = c.Get(u)
	default:
		fmt.Fprintln(os.Stderr, "effect: want post or check")
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "effect:", err)
		return 2
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode == http.StatusOK:
		if args[0] == "check" {
			os.Stdout.Write(body)
		}
		return 0
	case resp.StatusCode == http.StatusNotFound && args[0] == "check":
		return 1
	case args[0] == "post":
		return 1
	}
	return 2
}
