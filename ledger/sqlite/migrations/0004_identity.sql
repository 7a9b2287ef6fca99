-- Schema version 4: a holder's identity that proves it gone, and the mark
-- of a create that may be in flight.
--
-- owner_boot, owner_pidns and owner_start complete owner_pid into an
-- identity that names one process across machines and PID namespaces
-- (ledger.Proc); rows written before have them empty, and their holders
-- are taken for gone only when their leases end.
--
-- sending_at (nanoseconds, NULL for none) is written, forced, just before
-- a create leaves; sending_boot .. sending_start name a guarded command's
-- supervisor. An entry left attempting by an older ghonce may have had a
-- request in flight at its last write: it gets that time as its mark.

ALTER TABLE entries ADD COLUMN owner_boot    TEXT    NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN owner_pidns   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE entries ADD COLUMN owner_start   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE entries ADD COLUMN sending_at    INTEGER;
ALTER TABLE entries ADD COLUMN sending_boot  TEXT    NOT NULL DEFAULT '';
ALTER TABLE entries ADD COLUMN sending_pidns INTEGER NOT NULL DEFAULT 0;
ALTER TABLE entries ADD COLUMN sending_pid   INTEGER NOT NULL DEFAULT 0;
ALTER TABLE entries ADD COLUMN sending_start INTEGER NOT NULL DEFAULT 0;

UPDATE entries SET sending_at = updated_at WHERE status = 'attempting';
