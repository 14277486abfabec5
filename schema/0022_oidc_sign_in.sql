-- 0022: OpenID Connect sign-in (issue 24). A user may now be 'oidc' (created at first sign-in through the provider: no
-- local password, role and scope owned by the [auth.oidc] mapping), the audit trail gets the door 'oidc', the
-- provider's refresh token is kept encrypted per user for the re-check, and the client secret lives encrypted in
-- auth_secrets (set by `confvault auth set-oidc-secret`). users and audit_log are rebuilt to widen their CHECKs
-- (SQLite cannot alter one); src/db/migrate.ts runs this with foreign_keys OFF and checks them before COMMIT.

-- A column, index or trigger this migration does not know (added by a migration written meanwhile) would be lost
-- with its table: refuse to run rather than lose it.
CREATE TEMP TABLE migration_0022_guard (
  unknown INTEGER CONSTRAINT "0022 would drop a column, index or trigger of users or audit_log it does not recreate" CHECK (unknown = 0)
);
INSERT INTO migration_0022_guard (unknown)
  SELECT (SELECT count(*) FROM sqlite_schema
           WHERE type IN ('index', 'trigger') AND sql IS NOT NULL AND tbl_name IN ('users', 'audit_log')
             AND name NOT IN ('auth_epoch_users_insert', 'auth_epoch_users_update', 'auth_epoch_users_delete', 'users_username_key',
                              'audit_log_at', 'audit_log_action', 'audit_log_actor'))
       + (SELECT count(*) FROM pragma_table_info('users')
           WHERE name NOT IN ('id', 'username', 'password_hash', 'role_id', 'scope_all', 'timezone', 'disabled', 'must_change_password',
                              'created_at', 'updated_at', 'source', 'directory_dn', 'directory_checked_at', 'directory_disabled',
                              'totp_secret', 'totp_enabled_at', 'totp_last_step'))
       + (SELECT count(*) FROM pragma_table_info('audit_log')
           WHERE name NOT IN ('id', 'at', 'user_id', 'actor', 'action', 'target', 'details', 'door', 'door_ref', 'request_id', 'changes'));
DROP TABLE migration_0022_guard;

-- users: ids are never reused (0010), so the sequence is carried over.
CREATE TEMP TABLE migration_0022_seq AS SELECT seq FROM main.sqlite_sequence WHERE name = 'users';
CREATE TABLE users_new (
  id                   INTEGER PRIMARY KEY AUTOINCREMENT,
  username             TEXT NOT NULL UNIQUE COLLATE NOCASE CHECK (length(username) BETWEEN 1 AND 64),
  password_hash        TEXT NOT NULL,
  role_id              INTEGER NOT NULL REFERENCES roles(id) ON DELETE RESTRICT,
  scope_all            INTEGER NOT NULL DEFAULT 1 CHECK (scope_all IN (0, 1)),
  timezone             TEXT,
  disabled             INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
  must_change_password INTEGER NOT NULL DEFAULT 0 CHECK (must_change_password IN (0, 1)),
  created_at           INTEGER NOT NULL,
  updated_at           INTEGER NOT NULL,
  source               TEXT NOT NULL DEFAULT 'local' CHECK (source IN ('local', 'ldap', 'oidc')),
  -- LDAP: the user's DN; OIDC: "sub <subject>" as the provider names them.
  directory_dn         TEXT,
  directory_checked_at INTEGER,
  directory_disabled   INTEGER NOT NULL DEFAULT 0 CHECK (directory_disabled IN (0, 1)),
  -- 0021: the TOTP second factor of a local user.
  totp_secret          BLOB,
  totp_enabled_at      INTEGER,
  totp_last_step       INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO users_new SELECT id, username, password_hash, role_id, scope_all, timezone, disabled, must_change_password, created_at, updated_at,
                             source, directory_dn, directory_checked_at, directory_disabled, totp_secret, totp_enabled_at, totp_last_step
                        FROM main.users ORDER BY id;
DROP TABLE main.users;
ALTER TABLE users_new RENAME TO users;
UPDATE main.sqlite_sequence SET seq = max(seq, coalesce((SELECT seq FROM temp.migration_0022_seq), 0)) WHERE name = 'users';
INSERT INTO main.sqlite_sequence (name, seq)
  SELECT 'users', seq FROM temp.migration_0022_seq WHERE NOT EXISTS (SELECT 1 FROM main.sqlite_sequence WHERE name = 'users');
DROP TABLE temp.migration_0022_seq;
CREATE UNIQUE INDEX users_username_key ON users (name_key(username));
CREATE TRIGGER auth_epoch_users_insert AFTER INSERT ON users BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;
CREATE TRIGGER auth_epoch_users_update AFTER UPDATE ON users BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;
CREATE TRIGGER auth_epoch_users_delete AFTER DELETE ON users BEGIN UPDATE auth_epoch SET epoch = epoch + 1; END;

CREATE TABLE audit_log_new (
  id         INTEGER PRIMARY KEY,
  at         INTEGER NOT NULL,
  user_id    INTEGER REFERENCES users(id) ON DELETE SET NULL,
  actor      TEXT NOT NULL,
  action     TEXT NOT NULL,
  target     TEXT NOT NULL DEFAULT '',
  details    TEXT NOT NULL DEFAULT '{}',
  door       TEXT NOT NULL DEFAULT 'web' CHECK (door IN ('api', 'web', 'cli', 'system', 'ldap', 'oidc')),
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

-- The provider's tokens of an OIDC user, encrypted with the master key: the refresh token drives the re-check, the
-- ID token is the hint for the provider's logout.
CREATE TABLE oidc_tokens (
  user_id       INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  refresh_token BLOB,
  id_token      BLOB,
  updated_at    INTEGER NOT NULL
) STRICT;

-- Secrets of the sign-in doors, encrypted with the master key (name 'oidc.client_secret').
CREATE TABLE auth_secrets (
  name       TEXT PRIMARY KEY,
  value      BLOB NOT NULL,
  updated_at INTEGER NOT NULL
) STRICT;
