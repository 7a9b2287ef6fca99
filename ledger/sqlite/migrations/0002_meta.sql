-- Schema version 2: small named values kept beside the entries (how the
-- ledger was created, a cached login per token fingerprint). Never a
-- secret: callers store fingerprints, not tokens.

CREATE TABLE meta (
    name       TEXT    NOT NULL PRIMARY KEY,
    value      TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;
