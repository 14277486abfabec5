-- 0011: devices whose backups are held because a user not entitled to their credential chose where it would be sent.

-- One row per held device. A user lacking credentials.view, or whose device-group scope does not contain the
-- credential's usage scope, created the device with a credential, attached a credential, changed its address
-- (hostname, port, protocol) or accepted a host key: the change stands (spec 4.6), but no backup decrypts or sends
-- the secret until a user entitled to the credential approves exactly this address. hostname..credential_id are the
-- held values (the device's at the latest held change); prior_* the values last approved (NULL: created held);
-- changed is a JSON array of the fields changed since then ("created" for a new device, "host_key" for an accepted key).
CREATE TABLE device_credential_holds (
  device_id           INTEGER PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
  credential_id       INTEGER NOT NULL,
  hostname            TEXT NOT NULL,
  port                INTEGER NOT NULL,
  protocol            TEXT NOT NULL,
  prior_credential_id INTEGER,
  prior_hostname      TEXT,
  prior_port          INTEGER,
  prior_protocol      TEXT,
  changed             TEXT NOT NULL CHECK (json_valid(changed)),
  reason              TEXT NOT NULL,
  held_by             TEXT NOT NULL,
  held_at             INTEGER NOT NULL
) STRICT;
