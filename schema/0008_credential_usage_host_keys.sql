-- 0008: where a credential may be sent, and the one changed SSH host key a user approved. (The master key check value is a settings row.)

-- A credential listed here is restricted to the devices of the groups in credential_usage_groups (subgroups
-- included); a credential not listed is usable by devices anywhere. Kept apart from the groups so that deleting
-- the last group of a restricted credential leaves it usable nowhere, never everywhere.
CREATE TABLE credential_usage_scopes (
  credential_id INTEGER PRIMARY KEY REFERENCES credentials(id) ON DELETE CASCADE
) STRICT;

CREATE TABLE credential_usage_groups (
  credential_id INTEGER NOT NULL REFERENCES credential_usage_scopes(credential_id) ON DELETE CASCADE,
  group_id      INTEGER NOT NULL REFERENCES device_groups(id) ON DELETE CASCADE,
  PRIMARY KEY (credential_id, group_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX credential_usage_groups_group ON credential_usage_groups (group_id);

-- The changed host key a device last offered (seen by a HOST_KEY_CHANGED backup) and whether a user approved
-- exactly that fingerprint. The next backup accepts only this key; recording it removes the row.
CREATE TABLE device_host_key_offers (
  device_id   INTEGER PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
  fingerprint TEXT NOT NULL,
  backup_id   TEXT,
  seen_at     INTEGER NOT NULL,
  approved_at INTEGER,
  approved_by TEXT
) STRICT;

-- Existing devices lose a standing "accept any changed key": nothing was approved by fingerprint.
UPDATE devices SET accept_host_key_change = 0 WHERE accept_host_key_change <> 0;
