-- 0026: remote collectors (docs/collectors.md). A collector serves one zone; devices and groups name a zone (NULL: the
-- central appliance itself; a device without one inherits its nearest group's). Due backups of a zone wait in
-- collector_work until a collector of that zone leases them; a lease that expires returns the work to the queue.

CREATE TABLE collectors (
  id           INTEGER PRIMARY KEY,
  name         TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(name) BETWEEN 1 AND 64),
  zone         TEXT NOT NULL CHECK (length(zone) BETWEEN 1 AND 64),
  -- base64 DER (SPKI) public keys, pinned at enrolment: Ed25519 to verify requests, X25519 to seal job secrets to.
  signing_key  TEXT NOT NULL UNIQUE,
  sealing_key  TEXT NOT NULL,
  enrolled_at  INTEGER NOT NULL,
  last_seen_at INTEGER,
  version      TEXT,
  revoked_at   INTEGER,
  leased_total INTEGER NOT NULL DEFAULT 0,
  stored_total INTEGER NOT NULL DEFAULT 0
) STRICT;

-- One-time enrolment tokens: only the SHA-256 of the token is kept.
CREATE TABLE collector_tokens (
  token_hash   TEXT PRIMARY KEY,
  zone         TEXT NOT NULL CHECK (length(zone) BETWEEN 1 AND 64),
  created_by   TEXT NOT NULL,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  used_at      INTEGER,
  collector_id INTEGER REFERENCES collectors(id) ON DELETE SET NULL
) STRICT;

ALTER TABLE devices ADD COLUMN zone TEXT CHECK (zone IS NULL OR length(zone) BETWEEN 1 AND 64);
ALTER TABLE device_groups ADD COLUMN zone TEXT CHECK (zone IS NULL OR length(zone) BETWEEN 1 AND 64);

-- A device's due backup for its zone: queued (lease_id NULL) or leased to one collector until lease_expires_at.
CREATE TABLE collector_work (
  device_id        INTEGER PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
  zone             TEXT NOT NULL,
  trigger          TEXT NOT NULL CHECK (trigger IN ('schedule', 'manual', 'cli', 'api', 'event')),
  queued_at        INTEGER NOT NULL,
  lease_id         TEXT UNIQUE,
  collector_id     INTEGER REFERENCES collectors(id) ON DELETE SET NULL,
  lease_expires_at INTEGER
) STRICT;
CREATE INDEX collector_work_zone ON collector_work (zone, queued_at);

-- What each lease's upload stored: a retried upload (same lease id) answers with this backup, never stores twice.
CREATE TABLE collector_results (
  lease_id     TEXT PRIMARY KEY,
  collector_id INTEGER NOT NULL,
  device_id    INTEGER NOT NULL,
  backup_id    TEXT NOT NULL,
  received_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX collector_results_received ON collector_results (received_at);

-- Nonces of signed requests inside the replay window (older ones are dropped: their timestamp is refused anyway).
CREATE TABLE collector_nonces (
  collector_id INTEGER NOT NULL,
  nonce        TEXT NOT NULL,
  seen_at      INTEGER NOT NULL,
  PRIMARY KEY (collector_id, nonce)
) STRICT, WITHOUT ROWID;
CREATE INDEX collector_nonces_seen ON collector_nonces (seen_at);
