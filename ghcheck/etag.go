package ghcheck

import (
	"bytes"
	"crypto/sha256"
	"io"
	"net/http"
	"strconv"
	"sync"
)

// etagCache makes repeated reads conditional. ghonce reads the same
// listing more than once in one process: an engine that looks, is refused
// a duplicate (422 "already exists") and looks again; reconcile's batched
// listings followed by a rerun's look-up; a long-lived `ghonce mcp`
// answering the same call twice. GitHub answers a GET that carries the
// ETag it last sent in If-None-Match with 304 Not Modified when nothing
// changed, and a 304 does not count against the primary rate limit.
//
// A 304 is as consistent as the read it revalidates: GitHub compares the
// current content. The cache is per Client, in memory, keyed by the URL
// and a hash of the Authorization header (two identities never share an
// entry), and bounded.
type etagCache struct {
	mu    sync.Mutex
	items map[[32]byte]*etagItem
	order [][32]byte // insertion order, for eviction
	bytes int        // of the bodies held
}

// etagItem is a 200 answer kept for revalidation.
type etagItem struct {
	etag   string
	header http.Header
	body   []byte
}

const (
	etagMaxItems = 512
	etagMaxBody  = 4 << 20  // a larger answer is not kept
	etagMaxBytes = 32 << 20 // all bodies together
)

func newETagCache() *etagCache { return &etagCache{items: map[[32]byte]*etagItem{}} }

func etagKey(req *http.Request) [32]byte {
	h := sha256.New()
	io.WriteString(h, req.URL.String())
	h.Write([]byte{0})
	io.WriteString(h, req.Header.Get("Authorization"))
	h.Write([]byte{0})
	io.WriteString(h, req.Header.Get("Accept"))
	var k [32]byte
	copy(k[:], h.Sum(nil))
	return k
}

// roundTrip sends a GET, conditional when an earlier answer had an ETag.
// A 304 is answered from the cache as the 200 it revalidates, with the
// 304's own headers (fresh rate-limit figures) over the stored ones.
func (c *etagCache) roundTrip(base http.RoundTripper, req *http.Request, st *stats) (*http.Response, error) {
	k := etagKey(req)
	c.mu.Lock()
	it := c.items[k]
	c.mu.Unlock()
	if it != nil && req.Header.Get("If-None-Match") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("If-None-Match", it.etag)
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	switch {
	case resp.StatusCode == http.StatusNotModified && it != nil:
		st.notModified.Add(1)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		h := it.header.Clone()
		for name, v := range resp.Header {
			h[name] = v
		}
		h.Set("Content-Length", strconv.Itoa(len(it.body)))
		resp.StatusCode, resp.Status = http.StatusOK, "200 OK"
		resp.Header, resp.ContentLength = h, int64(len(it.body))
		resp.Body = io.NopCloser(bytes.NewReader(it.body))
		return resp, nil
	case resp.StatusCode == http.StatusOK && resp.Header.Get("ETag") != "":
		body, err := io.ReadAll(io.LimitReader(resp.Body, etagMaxBody+1))
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		if len(body) <= etagMaxBody {
			c.put(k, &etagItem{etag: resp.Header.Get("ETag"), header: resp.Header.Clone(), body: body})
		}
	}
	return resp, nil
}

func (c *etagCache) put(k [32]byte, it *etagItem) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.items[k]; ok {
		c.bytes -= len(old.body)
	} else {
		c.order = append(c.order, k)
	}
	c.items[k] = it
	c.bytes += len(it.body)
	for len(c.order) > etagMaxItems || c.bytes > etagMaxBytes {
		if old, ok := c.items[c.order[0]]; ok {
			c.bytes -= len(old.body)
			delete(c.items, c.order[0])
		}
		c.order = c.order[1:]
	}
}
