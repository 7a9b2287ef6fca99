package fakegithub

import (
	"fmt"
	"net"
	"net/http"
	"sync"
)

// listener is the fake's HTTP server: net/http's, with Close waiting for
// the requests in flight, as a test that counts what reached the fake needs.
type listener struct {
	url string
	srv *http.Server
	ln  net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]http.ConnState
	closed bool
	open   sync.WaitGroup // one per connection not yet closed or hijacked
	served chan struct{}  // closed when Serve has returned
}

// listen serves h on ln, or on a fresh port of 127.0.0.1 when ln is nil.
func listen(ln net.Listener, h http.Handler) (*listener, error) {
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			return nil, fmt.Errorf("the fake GitHub cannot listen on 127.0.0.1: %w", err)
		}
	}
	l := &listener{url: "http://" + ln.Addr().String(), ln: ln, conns: map[net.Conn]http.ConnState{}, served: make(chan struct{})}
	l.srv = &http.Server{Handler: h, ConnState: l.track}
	go func() {
		defer close(l.served)
		_ = l.srv.Serve(ln)
	}()
	return l, nil
}

// track follows each connection, closing the idle ones once the server is
// closing.
func (l *listener) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch st {
	case http.StateNew:
		l.open.Add(1)
		l.conns[c] = st
		if l.closed {
			_ = c.Close()
		}
	case http.StateActive:
		if _, ok := l.conns[c]; ok {
			l.conns[c] = st
		}
	case http.StateIdle:
		if _, ok := l.conns[c]; ok {
			l.conns[c] = st
		}
		if l.closed {
			_ = c.Close()
		}
	case http.StateHijacked, http.StateClosed:
		if _, ok := l.conns[c]; ok {
			delete(l.conns, c)
			l.open.Done()
		}
	}
}

// close stops accepting, closes the connections no request is on, and
// waits for the others to be answered and closed.
func (l *listener) close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		_ = l.ln.Close()
		l.srv.SetKeepAlivesEnabled(false)
		for c, st := range l.conns {
			if st == http.StateNew || st == http.StateIdle {
				_ = c.Close()
			}
		}
	}
	l.mu.Unlock()
	// A client on the default transport keeps its idle connections to a
	// closed fake otherwise.
	if t, ok := http.DefaultTransport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
	<-l.served
	l.open.Wait()
}
