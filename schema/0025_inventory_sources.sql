-- 0025: inventory sources (issue 26, docs/inventory.md). A source (NetBox, Nautobot or an HTTP JSON list in Oxidized's
-- layout) is synced into devices: inventory_devices links each device it created to the source's own id for it, so a
-- rename in the source renames the device (same id, history kept) and a device that vanishes is retired, never
-- deleted. A linked device's name, hostname, template and group belong to the source (devices.service refuses edits).
-- The audit trail gets the door 'inventory': the changes a sync makes name the source.
CREATE TABLE inventory_sources (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  name             TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(name) BETWEEN 1 AND 64),
  kind             TEXT NOT NULL CHECK (kind IN ('netbox', 'nautobot', 'http')),
  url              TEXT NOT NULL,
  -- The API token, encrypted with the master key (never returned); NULL: none.
  token_enc        BLOB,
  -- JSON: { site, role, tag, status } lists (NetBox/Nautobot query filters).
  filters          TEXT NOT NULL DEFAULT '{}',
  -- JSON: platform -> template map, default template, group path, hostname rule, field names (http).
  mapping          TEXT NOT NULL DEFAULT '{}',
  -- The credential of the devices it creates; NULL once that credential is deleted (a sync then says so).
  credential_id    INTEGER REFERENCES credentials(id) ON DELETE SET NULL,
  -- Minutes between scheduled syncs inside `serve`; NULL: only on demand.
  interval_minutes INTEGER CHECK (interval_minutes IS NULL OR interval_minutes BETWEEN 5 AND 10080),
  last_sync_at     INTEGER,
  last_sync_error  TEXT,
  created_at       INTEGER NOT NULL,
  updated_at       INTEGER NOT NULL
) STRICT;

CREATE TABLE inventory_devices (
  device_id   INTEGER PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
  source_id   INTEGER NOT NULL REFERENCES inventory_sources(id) ON DELETE CASCADE,
  external_id TEXT NOT NULL,
  UNIQUE (source_id, external_id)
) STRICT;

CREATE TABLE audit_log_new (
  id         INTEGER PRIMARY KEY,
  at         INTEGER NOT NULL,
  user_id    INTEGER REFERENCES users(id) ON DELETE SET NULL,
  actor      TEXT NOT NULL,
  action     TEXT NOT NULL,
  target     TEXT NOT NULL DEFAULT '',
  details    TEXT NOT NULL DEFAULT '{}',
  door       TEXT NOT NULL DEFAULT 'web' CHECK (door IN ('api', 'web', 'cli', 'system', 'ldap', 'oidc', 'inventory')),
  door_ref   TEXT,
  request_id TEXT,
  changes    TEXT NOT NULL DEFAULT '{}'
) STRICT;
INSERT INTO audit_log_new (id, at, user_id, actor, action, target, details, door, door_ref, request_id, changes)
  SELECT id, at, user_id, actor, action, target, details, door, door_ref, request_id, changes FROM audit_log;
DROP TABLE audit_log;
ALTER TABLE audit_log_new RENAME TO audit_log;
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_action ON audit_log (action, at);
CREATE INDEX audit_log_actor ON audit_log (actor COLLATE NOCASE, at);
