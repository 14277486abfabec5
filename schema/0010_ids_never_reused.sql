-- 0010: record ids are never reused. The seven tables whose ids the API, the CLI and integrations hold are rebuilt
-- with INTEGER PRIMARY KEY AUTOINCREMENT (a deleted id, even the highest, is never handed out again); every row, index
-- and trigger is kept. Each sequence starts at the table's highest id, or at the highest id the audit trail names if
-- that is higher (a newest record deleted before this version). Names become unique under Unicode case folding: unique indexes on name_key(name), an
-- application function (src/lib/names.ts, registered by src/db/open.ts).
--
-- src/db/migrate.ts runs this with foreign_keys OFF (a DROP TABLE must not cascade to backups, devices, ...) and runs
-- PRAGMA foreign_key_check before COMMIT. Other tables' foreign keys name these tables, so they hold again once the
-- tables are back under the same names.

-- A trigger or index on these tables that this migration does not know (added by a later-written migration) would be
-- dropped with its table and lost: refuse to run rather than lose it.
CREATE TEMP TABLE migration_0010_guard (
  unknown INTEGER CONSTRAINT "0010 would drop an index or trigger it does not recreate" CHECK (unknown = 0)
);
INSERT INTO migration_0010_guard (unknown)
  SELECT count(*) FROM sqlite_schema
   WHERE type IN ('index', 'trigger') AND sql IS NOT NULL AND tbl_name IN ('roles', 'device_groups', 'users', 'api_keys', 'credentials', 'templates', 'devices')
     AND name NOT IN ('device_groups_sibling_name', 'device_groups_parent', 'auth_epoch_groups_insert', 'auth_epoch_groups_move', 'auth_epoch_groups_delete', 'auth_epoch_users_insert', 'auth_epoch_users_update', 'auth_epoch_users_delete', 'auth_epoch_roles_update', 'auth_epoch_roles_delete', 'api_keys_user', 'auth_epoch_keys_update', 'auth_epoch_keys_delete', 'devices_group', 'devices_credential', 'devices_template', 'devices_reachability');
DROP TABLE migration_0010_guard;


-- roles
CREATE TEMP TABLE migration_0010_roles AS SELECT id, name, description, builtin, created_at FROM main.roles;
DROP TABLE main.roles;
CREATE TABLE roles (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(name) BETWEEN 1 AND 64),
  description TEXT NOT NULL DEFAULT '',
  builtin     INTEGER NOT NULL DEFAULT 0 CHECK (builtin IN (0, 1)),
  created_at  INTEGER NOT NULL
) STRICT;
INSERT INTO roles (id, name, description, builtin, created_at) SELECT id, name, description, builtin, created_at FROM temp.migration_0010_roles ORDER BY id;
DROP TABLE temp.migration_0010_roles;

-- device_groups
CREATE TEMP TABLE migration_0010_device_groups AS SELECT id, name, parent_id, description, schedule, created_at, updated_at FROM main.device_groups;
DROP TABLE main.device_groups;
CREATE TABLE device_groups (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
  parent_id   INTEGER REFERENCES device_groups(id) ON DELETE RESTRICT,
  description TEXT NOT NULL DEFAULT '',
  schedule    TEXT,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
) STRICT;
INSERT INTO device_groups (id, name, parent_id, description, schedule, created_at, updated_at) SELECT id, name, parent_id, description, schedule, created_at, updated_at FROM temp.migration_0010_device_groups ORDER BY id;
DROP TABLE temp.migration_0010_device_groups;

-- users
CREATE TEMP TABLE migration_0010_users AS SELECT id, username, password_hash, role_id, scope_all, timezone, disabled, must_change_password, created_at, updated_at FROM main.users;
DROP TABLE main.users;
CREATE TABLE users (
  id                   INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO users (id, username, password_hash, role_id, scope_all, timezone, disabled, must_change_password, created_at, updated_at) SELECT id, username, password_hash, role_id, scope_all, timezone, disabled, must_change_password, created_at, updated_at FROM temp.migration_0010_users ORDER BY id;
DROP TABLE temp.migration_0010_users;

-- api_keys
CREATE TEMP TABLE migration_0010_api_keys AS SELECT id, key_hash, prefix, name, user_id, created_at, expires_at, last_used_at, revoked_at FROM main.api_keys;
DROP TABLE main.api_keys;
CREATE TABLE api_keys (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  key_hash     BLOB NOT NULL UNIQUE,          -- SHA-256 of the whole key; the key itself is never stored
  prefix       TEXT NOT NULL,                 -- first characters, for recognising a key in lists
  name         TEXT NOT NULL DEFAULT '',
  user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER,
  last_used_at INTEGER,
  revoked_at   INTEGER
) STRICT;
INSERT INTO api_keys (id, key_hash, prefix, name, user_id, created_at, expires_at, last_used_at, revoked_at) SELECT id, key_hash, prefix, name, user_id, created_at, expires_at, last_used_at, revoked_at FROM temp.migration_0010_api_keys ORDER BY id;
DROP TABLE temp.migration_0010_api_keys;

-- credentials
CREATE TEMP TABLE migration_0010_credentials AS SELECT id, name, username, password_enc, private_key_enc, passphrase_enc, enable_secret_enc, description, created_at, updated_at FROM main.credentials;
DROP TABLE main.credentials;
CREATE TABLE credentials (
  id                INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO credentials (id, name, username, password_enc, private_key_enc, passphrase_enc, enable_secret_enc, description, created_at, updated_at) SELECT id, name, username, password_enc, private_key_enc, passphrase_enc, enable_secret_enc, description, created_at, updated_at FROM temp.migration_0010_credentials ORDER BY id;
DROP TABLE temp.migration_0010_credentials;

-- templates
CREATE TEMP TABLE migration_0010_templates AS SELECT id, name, vendor, description, builtin, spec, created_at, updated_at FROM main.templates;
DROP TABLE main.templates;
CREATE TABLE templates (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  name        TEXT NOT NULL UNIQUE COLLATE NOCASE,
  vendor      TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  builtin     INTEGER NOT NULL DEFAULT 0 CHECK (builtin IN (0, 1)),
  spec        TEXT NOT NULL,                   -- JSON: mode, prompt, commands, patterns (TemplateSpec)
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
) STRICT;
INSERT INTO templates (id, name, vendor, description, builtin, spec, created_at, updated_at) SELECT id, name, vendor, description, builtin, spec, created_at, updated_at FROM temp.migration_0010_templates ORDER BY id;
DROP TABLE temp.migration_0010_templates;

-- devices
CREATE TEMP TABLE migration_0010_devices AS SELECT id, name, hostname, port, protocol, group_id, credential_id, template_id, enabled, description, schedule, host_key, accept_host_key_change, reachability, reachability_checked_at, reachability_error, last_backup_id, created_at, updated_at FROM main.devices;
DROP TABLE main.devices;
CREATE TABLE devices (
  id                      INTEGER PRIMARY KEY AUTOINCREMENT,
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
INSERT INTO devices (id, name, hostname, port, protocol, group_id, credential_id, template_id, enabled, description, schedule, host_key, accept_host_key_change, reachability, reachability_checked_at, reachability_error, last_backup_id, created_at, updated_at) SELECT id, name, hostname, port, protocol, group_id, credential_id, template_id, enabled, description, schedule, host_key, accept_host_key_change, reachability, reachability_checked_at, reachability_error, last_backup_id, created_at, updated_at FROM temp.migration_0010_devices ORDER BY id;
DROP TABLE temp.migration_0010_devices;
-- Indexes of 0001 (the UNIQUE columns' own indexes came back with their tables).
CREATE UNIQUE INDEX device_groups_sibling_name ON device_groups (ifnull(parent_id, 0), name COLLATE NOCASE);
CREATE INDEX device_groups_parent ON device_groups (parent_id);
CREATE INDEX api_keys_user ON api_keys (user_id);
CREATE INDEX devices_group ON devices (group_id);
CREATE INDEX devices_credential ON devices (credential_id);
CREATE INDEX devices_template ON devices (template_id);
CREATE INDEX devices_reachability ON devices (reachability);

-- Triggers of 0004 (the principal-cache epoch).
CREATE TRIGGER auth_epoch_users_insert AFTER INSERT ON users BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;
CREATE TRIGGER auth_epoch_users_update AFTER UPDATE ON users BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;
CREATE TRIGGER auth_epoch_users_delete AFTER DELETE ON users BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;
CREATE TRIGGER auth_epoch_roles_update AFTER UPDATE ON roles BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;
CREATE TRIGGER auth_epoch_roles_delete AFTER DELETE ON roles BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;
CREATE TRIGGER auth_epoch_groups_insert AFTER INSERT ON device_groups BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;
CREATE TRIGGER auth_epoch_groups_move AFTER UPDATE OF id, parent_id ON device_groups BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;
CREATE TRIGGER auth_epoch_groups_delete AFTER DELETE ON device_groups BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;
CREATE TRIGGER auth_epoch_keys_update AFTER UPDATE OF id, key_hash, user_id, expires_at, revoked_at ON api_keys BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;
CREATE TRIGGER auth_epoch_keys_delete AFTER DELETE ON api_keys BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;
-- Principals cached before the rebuild are read again.
UPDATE auth_epoch SET epoch = epoch + 1;

-- Names equal only under Unicode case folding ("Zürich-1" and "ZÜRICH-1") could coexist before: every such name but
-- the oldest gets " (<id>)" appended, recorded in the audit trail, so that the unique indexes below can be built.
CREATE TEMP TABLE migration_0010_renames (kind TEXT NOT NULL, id INTEGER NOT NULL, before TEXT NOT NULL, after TEXT NOT NULL);
INSERT INTO migration_0010_renames (kind, id, before, after)
  SELECT 'device', d.id, d.name, substr(d.name, 1, 128 - length(' (' || d.id || ')')) || ' (' || d.id || ')'
    FROM devices d
   WHERE EXISTS (SELECT 1 FROM devices o WHERE o.id < d.id AND name_key(o.name) = name_key(d.name));
INSERT INTO migration_0010_renames (kind, id, before, after)
  SELECT 'group', g.id, g.name, substr(g.name, 1, 128 - length(' (' || g.id || ')')) || ' (' || g.id || ')'
    FROM device_groups g
   WHERE EXISTS (SELECT 1 FROM device_groups o
                  WHERE o.id < g.id AND ifnull(o.parent_id, 0) = ifnull(g.parent_id, 0) AND name_key(o.name) = name_key(g.name));
INSERT INTO migration_0010_renames (kind, id, before, after)
  SELECT 'credential', c.id, c.name, substr(c.name, 1, 128 - length(' (' || c.id || ')')) || ' (' || c.id || ')'
    FROM credentials c
   WHERE EXISTS (SELECT 1 FROM credentials o WHERE o.id < c.id AND name_key(o.name) = name_key(c.name));
UPDATE devices SET name = (SELECT after FROM migration_0010_renames r WHERE r.kind = 'device' AND r.id = devices.id)
 WHERE id IN (SELECT id FROM migration_0010_renames WHERE kind = 'device');
UPDATE device_groups SET name = (SELECT after FROM migration_0010_renames r WHERE r.kind = 'group' AND r.id = device_groups.id)
 WHERE id IN (SELECT id FROM migration_0010_renames WHERE kind = 'group');
UPDATE credentials SET name = (SELECT after FROM migration_0010_renames r WHERE r.kind = 'credential' AND r.id = credentials.id)
 WHERE id IN (SELECT id FROM migration_0010_renames WHERE kind = 'credential');
INSERT INTO audit_log (at, user_id, actor, action, target, details, door, door_ref, request_id, changes)
  SELECT CAST(unixepoch('subsec') * 1000 AS INTEGER), NULL, 'system', kind || '.update', kind || ' ' || id,
         json_object('reason', 'schema 0010: the name equalled an older ' || kind || '''s name under Unicode case folding'),
         'system', NULL, NULL, json_object('name', json_object('before', before, 'after', after))
    FROM migration_0010_renames ORDER BY kind, id;
DROP TABLE migration_0010_renames;

-- Ids handed out before this version whose records were deleted since are above the tables' highest ids only if they
-- were the newest: the audit trail still names them ("device 12"), so the sequences start above those too.
CREATE TEMP TABLE migration_0010_audited_ids (tbl TEXT NOT NULL, seq INTEGER);
WITH kinds (tbl, prefix) AS (
  VALUES ('devices', 'device '), ('device_groups', 'group '), ('credentials', 'credential '), ('templates', 'template '), ('api_keys', 'key ')
)
INSERT INTO migration_0010_audited_ids (tbl, seq)
  SELECT tbl, (SELECT max(CAST(substr(a.target, length(prefix) + 1) AS INTEGER)) FROM audit_log a
                WHERE a.target GLOB prefix || '[0-9]*' AND substr(a.target, length(prefix) + 1) NOT GLOB '*[^0-9]*'
                  AND length(a.target) - length(prefix) <= 15)
    FROM kinds;
UPDATE sqlite_sequence SET seq = (SELECT i.seq FROM migration_0010_audited_ids i WHERE i.tbl = sqlite_sequence.name)
 WHERE EXISTS (SELECT 1 FROM migration_0010_audited_ids i WHERE i.tbl = sqlite_sequence.name AND i.seq > sqlite_sequence.seq);
INSERT INTO sqlite_sequence (name, seq)
  SELECT tbl, seq FROM migration_0010_audited_ids i WHERE seq IS NOT NULL AND NOT EXISTS (SELECT 1 FROM sqlite_sequence s WHERE s.name = i.tbl);
DROP TABLE migration_0010_audited_ids;

-- Uniqueness under Unicode case folding and NFC (NOCASE folds ASCII only).
CREATE UNIQUE INDEX devices_name_key ON devices (name_key(name));
CREATE UNIQUE INDEX device_groups_sibling_name_key ON device_groups (ifnull(parent_id, 0), name_key(name));
CREATE UNIQUE INDEX credentials_name_key ON credentials (name_key(name));
CREATE UNIQUE INDEX templates_name_key ON templates (name_key(name));
CREATE UNIQUE INDEX users_username_key ON users (name_key(username));
CREATE UNIQUE INDEX roles_name_key ON roles (name_key(name));
