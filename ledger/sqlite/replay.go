package sqlite

import (
	"github.com/ghonce/ghonce/ledger"
)

// maxCachedReplays bounds the replay cache; past it the cache starts over.
const maxCachedReplays = 10000

// replayCache answers Claim for done entries without reading them again. It
// is kept on the writer connection and used only while Ledger.writer is
// held. PRAGMA data_version is per connection: it changes when any other
// connection (of this process or another) has committed since the last time
// this connection asked, and never for this connection's own commits. Every
// lookup asks first and empties the cache on a change, so an entry a person
// resolved elsewhere is never answered from the cache; this process's own
// writes to a done entry forget it.
type replayCache struct {
	version int64
	done    map[string]*ledger.Entry
}

// lookup returns the cached done entry for key, if any, after checking that
// no other connection has committed since the cache was filled.
func (c *replayCache) lookup(w *wconn, key string) (*ledger.Entry, error) {
	v := w.row[:1]
	if _, err := w.queryRow("PRAGMA data_version", v); err != nil {
		c.reset()
		return nil, err
	}
	if version, _ := v[0].(int64); version != c.version || c.done == nil {
		c.version = version
		c.done = make(map[string]*ledger.Entry)
	}
	if e, ok := c.done[key]; ok {
		return cloneEntry(e), nil
	}
	return nil, nil
}

// put caches e, a done entry read under the version lookup checked.
func (c *replayCache) put(e *ledger.Entry) {
	if c.done == nil || e.Status != ledger.Done {
		return
	}
	if len(c.done) >= maxCachedReplays {
		clear(c.done)
	}
	c.done[e.Key] = cloneEntry(e)
}

// forget drops key, after this process wrote it.
func (c *replayCache) forget(key string) { delete(c.done, key) }

// reset empties the cache: the next lookup starts over.
func (c *replayCache) reset() { c.done = nil }

func cloneEntry(e *ledger.Entry) *ledger.Entry {
	out := *e
	out.Payload = append([]byte(nil), e.Payload...)
	return &out
}
