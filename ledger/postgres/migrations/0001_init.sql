-- Schema version 1 of the ghonce ledger on Postgres.
--
-- Every name starts with ghonce_, so the ledger can share a schema (even
-- public) with the user's own tables. Times are timestamptz (microseconds)
-- and come from the server's clock. lease_until is NULL when no lease is held.

CREATE TABLE ghonce_entries (
    key          text        NOT NULL PRIMARY KEY,
    task         text        NOT NULL,
    step         text        NOT NULL,
    kind         text        NOT NULL,
    repo         text        NOT NULL,
    target       text        NOT NULL,
    payload      bytea       NOT NULL,
    payload_hash text        NOT NULL,
    status       text        NOT NULL CHECK (status IN ('attempting', 'done', 'failed')),
    outcome      text        NOT NULL DEFAULT '',
    ref_number   bigint      NOT NULL DEFAULT 0,
    ref_id       bigint      NOT NULL DEFAULT 0,
    ref_url      text        NOT NULL DEFAULT '',
    ref_sha      text        NOT NULL DEFAULT '',
    ref_text     text        NOT NULL DEFAULT '',
    owner_id     text        NOT NULL DEFAULT '',
    owner_host   text        NOT NULL DEFAULT '',
    owner_pid    integer     NOT NULL DEFAULT 0,
    lease_until  timestamptz,
    fence        bigint      NOT NULL CHECK (fence >= 1),
    attempts     integer     NOT NULL CHECK (attempts >= 1),
    last_error   text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);

-- List returns entries oldest first, by (created_at, key); each filter has an
-- index that keeps that order so a filtered, limited List reads few rows.
CREATE INDEX ghonce_entries_by_created ON ghonce_entries (created_at, key);
CREATE INDEX ghonce_entries_by_task    ON ghonce_entries (task, created_at, key);
CREATE INDEX ghonce_entries_by_repo    ON ghonce_entries (repo, created_at, key);
CREATE INDEX ghonce_entries_by_status  ON ghonce_entries (status, created_at, key);
CREATE INDEX ghonce_entries_by_updated ON ghonce_entries (updated_at);

-- ghonce_transitions is the history of every entry, ordered by id. Rows are
-- never updated; deleting an entry (retention) deletes its history with it.
CREATE TABLE ghonce_transitions (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key         text        NOT NULL REFERENCES ghonce_entries (key) ON DELETE CASCADE,
    at          timestamptz NOT NULL,
    owner       text        NOT NULL,
    from_status text        NOT NULL,
    to_status   text        NOT NULL,
    fence       bigint      NOT NULL,
    why         text        NOT NULL
);

CREATE INDEX ghonce_transitions_by_key ON ghonce_transitions (key, id);

CREATE FUNCTION ghonce_transitions_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'ghonce ledger: transitions are append-only';
END;
$$;

CREATE TRIGGER ghonce_transitions_no_update BEFORE UPDATE ON ghonce_transitions
    FOR EACH ROW EXECUTE FUNCTION ghonce_transitions_append_only();

-- Small named values about the ledger itself (how it was created, ...).
CREATE TABLE ghonce_meta (
    name       text        NOT NULL PRIMARY KEY,
    value      text        NOT NULL,
    updated_at timestamptz NOT NULL
);
