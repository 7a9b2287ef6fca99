package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"

	"github.com/ghonce/ghonce/ledger"
)

// maxCachedReplays bounds the replay cache; past it the cache starts over.
const maxCachedReplays = 10000

// replayCache answers Claim for done entries without reading them again. It
// owns one connection of the main pool, because PRAGMA data_version is per
// connection: it changes when any other connection (of this process or
// another) has committed since the last time this connection asked. Every
// lookup asks first and empties the cache on a change, so an entry a person
// resolved elsewhere is never answered from the cache.
type replayCache struct {
	mu   sync.Mutex
	conn *sql.Conn
	// Statements prepared once on conn: preparing is most of a small
	// query's cost.
	versionStmt, getStmt *sql.Stmt
	version              int64
	done                 map[string]*ledger.Entry
	closed               bool
}

// lookup returns the entry for key and whether it came from the cache. It
// returns ledger.ErrNotFound for an unknown key.
func (c *replayCache) lookup(ctx context.Context, db *sql.DB, key string) (*ledger.Entry, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errors.New("ledger is closed")
	}
	if c.conn == nil {
		if err := c.open(ctx, db); err != nil {
			return nil, err
		}
	}
	var v int64
	if err := c.versionStmt.QueryRowContext(ctx).Scan(&v); err != nil {
		c.drop()
		return nil, err
	}
	if v != c.version || c.done == nil {
		c.version = v
		c.done = make(map[string]*ledger.Entry)
	}
	if e, ok := c.done[key]; ok {
		return cloneEntry(e), nil
	}
	// Read on the same connection, after data_version: a commit that lands
	// in between changes data_version, so the next lookup starts over.
	e, err := scanEntry(c.getStmt.QueryRowContext(ctx, key))
	if errors.Is(err, sql.ErrNoRows) {
		err = ledger.ErrNotFound
	}
	if err != nil {
		if !errors.Is(err, ledger.ErrNotFound) {
			c.drop()
		}
		return nil, err
	}
	if e.Status == ledger.Done {
		if len(c.done) >= maxCachedReplays {
			clear(c.done)
		}
		c.done[key] = cloneEntry(e)
	}
	return e, nil
}

// forget drops key, after this process wrote it.
func (c *replayCache) forget(key string) {
	c.mu.Lock()
	delete(c.done, key)
	c.mu.Unlock()
}

// open takes the cache's connection and prepares its statements. c.mu is held.
func (c *replayCache) open(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	c.conn = conn
	if c.versionStmt, err = conn.PrepareContext(ctx, "PRAGMA data_version"); err == nil {
		c.getStmt, err = conn.PrepareContext(ctx, "SELECT "+entryColumns+" FROM entries WHERE key = ?")
	}
	if err != nil {
		c.drop()
	}
	return err
}

// drop gives the connection back after an error: the next lookup takes a
// fresh one and starts with an empty cache. c.mu is held.
func (c *replayCache) drop() {
	for _, st := range []*sql.Stmt{c.versionStmt, c.getStmt} {
		if st != nil {
			st.Close()
		}
	}
	c.versionStmt, c.getStmt = nil, nil
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
	c.done = nil
}

func (c *replayCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drop()
	c.closed = true
}

func cloneEntry(e *ledger.Entry) *ledger.Entry {
	out := *e
	out.Payload = append([]byte(nil), e.Payload...)
	return &out
}
