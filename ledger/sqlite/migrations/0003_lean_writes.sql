-- Schema version 3: the same rows, kept so that recording an action writes
-- fewer pages, and fewer of them at random places (see docs/performance.md:
-- a fresh action is one claim and one done record; every page a commit
-- changes is written to the WAL and later, by a checkpoint, to the file,
-- and on a large ledger a page at a random place is also a random write).
--
-- entries gets an explicit id in the order entries are created: a new
-- entry's row goes at the end of the table, where the done record that
-- follows finds it again. The key stays unique; its index is the one
-- B-tree a new entry touches at a random place, and the smallest. Of the
-- other indexes only those a command needs on a large ledger stay: the
-- default listing (created_at, key), a task's entries (task, ...), a
-- repository's entries (`status --repo`, `labels prune`), and the entries
-- that are not done (reconcile, `status --stale`; a partial index, which an
-- entry leaves when it is done). A filter by state or kind alone walks the
-- default order.
--
-- transitions is keyed by (entry_id, seq), seq counting an entry's
-- transitions from 1: an entry's history sits together, a new entry's at
-- the end, and a new transition changes one page instead of a table page
-- and an index page. entries.history_len is how many transitions the entry
-- has: a write reads it with the entry and numbers the next one without
-- searching the history.

CREATE TABLE entries_v3 (
    id           INTEGER PRIMARY KEY,
    key          TEXT    NOT NULL UNIQUE,
    task         TEXT    NOT NULL,
    step         TEXT    NOT NULL,
    kind         TEXT    NOT NULL,
    repo         TEXT    NOT NULL,
    target       TEXT    NOT NULL,
    payload      BLOB    NOT NULL,
    payload_hash TEXT    NOT NULL,
    status       TEXT    NOT NULL CHECK (status IN ('attempting', 'done', 'failed')),
    outcome      TEXT    NOT NULL DEFAULT '',
    ref_number   INTEGER NOT NULL DEFAULT 0,
    ref_id       INTEGER NOT NULL DEFAULT 0,
    ref_url      TEXT    NOT NULL DEFAULT '',
    ref_sha      TEXT    NOT NULL DEFAULT '',
    ref_text     TEXT    NOT NULL DEFAULT '',
    owner_id     TEXT    NOT NULL DEFAULT '',
    owner_host   TEXT    NOT NULL DEFAULT '',
    owner_pid    INTEGER NOT NULL DEFAULT 0,
    lease_until  INTEGER,
    fence        INTEGER NOT NULL CHECK (fence >= 1),
    attempts     INTEGER NOT NULL CHECK (attempts >= 1),
    last_error   TEXT    NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    history_len  INTEGER NOT NULL DEFAULT 0 CHECK (history_len >= 0)
) STRICT;

INSERT INTO entries_v3 (id, key, task, step, kind, repo, target, payload, payload_hash,
    status, outcome, ref_number, ref_id, ref_url, ref_sha, ref_text,
    owner_id, owner_host, owner_pid, lease_until, fence, attempts, last_error,
    created_at, updated_at, history_len)
SELECT row_number() OVER (ORDER BY created_at, key), key, task, step, kind, repo, target, payload, payload_hash,
    status, outcome, ref_number, ref_id, ref_url, ref_sha, ref_text,
    owner_id, owner_host, owner_pid, lease_until, fence, attempts, last_error,
    created_at, updated_at, (SELECT count(*) FROM transitions t WHERE t.key = e.key)
FROM entries e;

CREATE TABLE transitions_v3 (
    entry_id    INTEGER NOT NULL REFERENCES entries_v3 (id),
    seq         INTEGER NOT NULL CHECK (seq >= 1),
    key         TEXT    NOT NULL,
    at          INTEGER NOT NULL,
    owner       TEXT    NOT NULL,
    from_status TEXT    NOT NULL,
    to_status   TEXT    NOT NULL,
    fence       INTEGER NOT NULL,
    why         TEXT    NOT NULL,
    PRIMARY KEY (entry_id, seq)
) STRICT, WITHOUT ROWID;

INSERT INTO transitions_v3 (entry_id, seq, key, at, owner, from_status, to_status, fence, why)
SELECT e.id, row_number() OVER (PARTITION BY t.key ORDER BY t.id), t.key, t.at, t.owner, t.from_status, t.to_status, t.fence, t.why
FROM transitions t JOIN entries_v3 e ON e.key = t.key;

DROP TRIGGER transitions_no_update;
DROP TRIGGER transitions_no_delete;
DROP TABLE transitions;
DROP TABLE entries;
ALTER TABLE entries_v3 RENAME TO entries;
ALTER TABLE transitions_v3 RENAME TO transitions;

-- List returns entries oldest first, by (created_at, key).
CREATE INDEX entries_by_created   ON entries (created_at, key);
CREATE INDEX entries_by_task      ON entries (task, created_at, key);
CREATE INDEX entries_by_repo      ON entries (repo, created_at, key);
CREATE INDEX entries_not_done     ON entries (created_at, key) WHERE status <> 'done';

-- A ghonce of schema 2 that had the ledger open while a newer one migrated
-- it still writes history rows by key alone: tell it what happened instead
-- of failing on a NOT NULL constraint. (Once it closes the ledger, it
-- refuses to open it again: the schema version is newer than it knows.)
CREATE TRIGGER transitions_need_seq BEFORE INSERT ON transitions WHEN NEW.seq IS NULL OR NEW.entry_id IS NULL
BEGIN
    SELECT RAISE(ABORT, 'ghonce ledger: a newer ghonce upgraded this ledger to schema version 3 while this process had it open; upgrade ghonce and run again');
END;

CREATE TRIGGER transitions_no_update BEFORE UPDATE ON transitions
BEGIN
    SELECT RAISE(ABORT, 'ghonce ledger: transitions are append-only');
END;

CREATE TRIGGER transitions_no_delete BEFORE DELETE ON transitions
BEGIN
    SELECT RAISE(ABORT, 'ghonce ledger: transitions are append-only');
END;
