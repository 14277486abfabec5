-- 0001: the whole initial schema. Timestamps are INTEGER milliseconds since the Unix epoch, UTC.

CREATE TABLE roles (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(name) BETWEEN 1 AND 64),
  description TEXT NOT NULL DEFAULT '',
  builtin     INTEGER NOT NULL DEFAULT 0 CHECK (builtin IN (0, 1)),
  created_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE role_permissions (
  role_id    INTEGER NOT NULL REFERENCES roles(id) ON DELETE CASCADE,
  permission TEXT NOT NULL,
  PRIMARY KEY (role_id, permission)
) STRICT, WITHOUT ROWID;

CREATE TABLE device_groups (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
  parent_id   INTEGER REFERENCES device_groups(id) ON DELETE RESTRICT,
  description TEXT NOT NULL DEFAULT '',
  schedule    TEXT,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
) STRICT;
CREATE UNIQUE INDEX device_groups_sibling_name ON device_groups (ifnull(parent_id, 0), name COLLATE NOCASE);
CREATE INDEX device_groups_parent ON device_groups (parent_id);

CREATE TABLE users (
  id                   INTEGER PRIMARY KEY,
  username             TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(username) BETWEEN 1 AND 64),
  password_hash        TEXT NOT NULL,
  role_id              INTEGER NOT NULL REFERENCES roles(id) ON DELETE RESTRICT,
  scope_all            INTEGER NOT NULL DEFAULT 1 CHECK (scope_all IN (0, 1)),
  timezone             TEXT,
  disabled             INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
  must_change_password INTEGER NOT NULL DEFAULT 0 CHECK (must_change_password IN (0, 1)),
  created_at           INTEGER NOT NULL,
  updated_at           INTEGER NOT NULL
) STRICT;

-- Device-group scope of a user whose scope is not "all"; each group includes its subgroups.
CREATE TABLE user_scope_groups (
  user_id  INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  group_id INTEGER NOT NULL REFERENCES device_groups(id) ON DELETE CASCADE,
  PRIMARY KEY (user_id, group_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE api_keys (
  id           INTEGER PRIMARY KEY,
  key_hash     BLOB NOT NULL UNIQUE,          -- SHA-256 of the whole key; the key itself is never stored
  prefix       TEXT NOT NULL,                 -- first characters, for recognising a key in lists
  name         TEXT NOT NULL DEFAULT '',
  user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER,
  last_used_at INTEGER,
  revoked_at   INTEGER
) STRICT;
CREATE INDEX api_keys_user ON api_keys (user_id);

CREATE TABLE credentials (
  id                INTEGER PRIMARY KEY,
  name              TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(name) BETWEEN 1 AND 128),
  username          TEXT NOT NULL DEFAULT '',
  password_enc      BLOB,                      -- AES-256-GCM under the master key
  private_key_enc   BLOB,
  passphrase_enc    BLOB,
  enable_secret_enc BLOB,
  description       TEXT NOT NULL DEFAULT '',
  created_at        INTEGER NOT NULL,
  updated_at        INTEGER NOT NULL
) STRICT;

CREATE TABLE templates (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE COLLATE NOCASE,
  vendor      TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  builtin     INTEGER NOT NULL DEFAULT 0 CHECK (builtin IN (0, 1)),
  spec        TEXT NOT NULL,                   -- JSON: mode, prompt, commands, patterns (TemplateSpec)
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
) STRICT;

CREATE TABLE devices (
  id                      INTEGER PRIMARY KEY,
  name                    TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(name) BETWEEN 1 AND 128),
  hostname                TEXT NOT NULL,
  port                    INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
  protocol                TEXT NOT NULL CHECK (protocol IN ('ssh', 'telnet')),
  group_id                INTEGER REFERENCES device_groups(id) ON DELETE RESTRICT,
  credential_id           INTEGER NOT NULL REFERENCES credentials(id) ON DELETE RESTRICT,
  template_id             INTEGER NOT NULL REFERENCES templates(id) ON DELETE RESTRICT,
  enabled                 INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  description             TEXT NOT NULL DEFAULT '',
  schedule                TEXT,
  host_key                TEXT,
  accept_host_key_change  INTEGER NOT NULL DEFAULT 0 CHECK (accept_host_key_change IN (0, 1)),
  reachability            TEXT NOT NULL DEFAULT 'unknown' CHECK (reachability IN ('reachable', 'unreachable', 'unknown')),
  reachability_checked_at INTEGER,
  reachability_error      TEXT,
  last_backup_id          TEXT,
  created_at              INTEGER NOT NULL,
  updated_at              INTEGER NOT NULL
) STRICT;
CREATE INDEX devices_group ON devices (group_id);
CREATE INDEX devices_credential ON devices (credential_id);
CREATE INDEX devices_template ON devices (template_id);
CREATE INDEX devices_reachability ON devices (reachability);

CREATE TABLE backups (
  id                   TEXT PRIMARY KEY,       -- UUID
  device_id            INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
  template_id          INTEGER REFERENCES templates(id) ON DELETE SET NULL,
  trigger              TEXT NOT NULL CHECK (trigger IN ('schedule', 'manual', 'cli', 'import', 'api')),
  started_at           INTEGER NOT NULL,
  finished_at          INTEGER,
  success              INTEGER NOT NULL DEFAULT 0 CHECK (success IN (0, 1)),
  error_message        TEXT,
  failure_type         TEXT,
  duration_ms          INTEGER,
  config_snapshot_hash TEXT,
  config_size          INTEGER,
  change_fingerprint   TEXT,
  changed              INTEGER NOT NULL DEFAULT 0 CHECK (changed IN (0, 1))
) STRICT;
-- Backup history of one device, newest first; covering the listed columns keeps deep pages cheap.
CREATE INDEX backups_device_history ON backups (device_id, started_at DESC, id DESC);
CREATE INDEX backups_started ON backups (started_at);
CREATE INDEX backups_running ON backups (device_id) WHERE finished_at IS NULL;
CREATE INDEX backups_snapshot ON backups (config_snapshot_hash) WHERE config_snapshot_hash IS NOT NULL;

-- Content-addressed snapshot files under <data_dir>/snapshots; one row per distinct text.
CREATE TABLE snapshots (
  hash        TEXT PRIMARY KEY,
  size        INTEGER NOT NULL,
  stored_size INTEGER NOT NULL,
  compressed  INTEGER NOT NULL CHECK (compressed IN (0, 1)),
  created_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- Running totals kept by triggers so statistics never scan the backups table.
CREATE TABLE backup_totals (
  id                 INTEGER PRIMARY KEY CHECK (id = 1),
  total              INTEGER NOT NULL,
  bytes_before_dedup INTEGER NOT NULL
) STRICT;
INSERT INTO backup_totals (id, total, bytes_before_dedup) VALUES (1, 0, 0);

CREATE TRIGGER backups_count_insert AFTER INSERT ON backups BEGIN
  UPDATE backup_totals SET total = total + 1, bytes_before_dedup = bytes_before_dedup + ifnull(NEW.config_size, 0) WHERE id = 1;
END;
CREATE TRIGGER backups_count_update AFTER UPDATE OF config_size ON backups BEGIN
  UPDATE backup_totals SET bytes_before_dedup = bytes_before_dedup - ifnull(OLD.config_size, 0) + ifnull(NEW.config_size, 0) WHERE id = 1;
END;
CREATE TRIGGER backups_count_delete AFTER DELETE ON backups BEGIN
  UPDATE backup_totals SET total = total - 1, bytes_before_dedup = bytes_before_dedup - ifnull(OLD.config_size, 0) WHERE id = 1;
END;

CREATE TABLE settings (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT, WITHOUT ROWID;

CREATE TABLE audit_log (
  id       INTEGER PRIMARY KEY,
  at       INTEGER NOT NULL,
  user_id  INTEGER REFERENCES users(id) ON DELETE SET NULL,
  actor    TEXT NOT NULL,                      -- username, "cli" or "system"
  action   TEXT NOT NULL,                      -- e.g. device.create, apikey.revoke, login
  target   TEXT NOT NULL DEFAULT '',
  details  TEXT NOT NULL DEFAULT '{}'
) STRICT;
CREATE INDEX audit_log_at ON audit_log (at);
