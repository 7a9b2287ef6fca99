-- Schema version 2: a holder's identity that proves it gone, and the mark
-- of a create that may be in flight (see the SQLite ledger's migration 4,
-- which adds the same columns).

ALTER TABLE ghonce_entries
    ADD COLUMN owner_boot    text        NOT NULL DEFAULT '',
    ADD COLUMN owner_pidns   bigint      NOT NULL DEFAULT 0,
    ADD COLUMN owner_start   bigint      NOT NULL DEFAULT 0,
    ADD COLUMN sending_at    timestamptz,
    ADD COLUMN sending_boot  text        NOT NULL DEFAULT '',
    ADD COLUMN sending_pidns bigint      NOT NULL DEFAULT 0,
    ADD COLUMN sending_pid   integer     NOT NULL DEFAULT 0,
    ADD COLUMN sending_start bigint      NOT NULL DEFAULT 0;

UPDATE ghonce_entries SET sending_at = updated_at WHERE status = 'attempting';
