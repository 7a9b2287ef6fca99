-- Schema version 1 of the ghonce ledger.
--
-- Times are INTEGER nanoseconds since the Unix epoch, UTC. lease_until is
-- NULL when no lease is held. The tables are STRICT so a value of the wrong
-- type is refused instead of stored.

CREATE TABLE entries (
    key          TEXT    NOT NULL PRIMARY KEY,
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
    updated_at   INTEGER NOT NULL
) STRICT;

-- List returns entries oldest first, by (created_at, key); each filter has an
-- index that keeps that order so a filtered, limited List reads few rows.
CREATE INDEX entries_by_created ON entries (created_at, key);
CREATE INDEX entries_by_task    ON entries (task, created_at, key);
CREATE INDEX entries_by_repo    ON entries (repo, created_at, key);
CREATE INDEX entries_by_status  ON entries (status, created_at, key);
CREATE INDEX entries_by_updated ON entries (updated_at);

-- transitions is the append-only history of every entry. id orders it.
CREATE TABLE transitions (
    id          INTEGER PRIMARY KEY,
    key         TEXT    NOT NULL REFERENCES entries (key),
    at          INTEGER NOT NULL,
    owner       TEXT    NOT NULL,
    from_status TEXT    NOT NULL,
    to_status   TEXT    NOT NULL,
    fence       INTEGER NOT NULL,
    why         TEXT    NOT NULL
) STRICT;

CREATE INDEX transitions_by_key ON transitions (key, id);

CREATE TRIGGER transitions_no_update BEFORE UPDATE ON transitions
BEGIN
    SELECT RAISE(ABORT, 'ghonce ledger: transitions are append-only');
END;

CREATE TRIGGER transitions_no_delete BEFORE DELETE ON transitions
BEGIN
    SELECT RAISE(ABORT, 'ghonce ledger: transitions are append-only');
END;
