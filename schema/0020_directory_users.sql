-- 0020: directory sign-in (issue 24). A user is 'local' (password here) or 'ldap' (created at first directory sign-in:
-- no local password, role and scope owned by the [auth.ldap] mapping and re-applied at each sign-in and re-check).
-- The audit trail gets the door 'ldap' for directory sign-in attempts and re-checks.
ALTER TABLE users ADD COLUMN source TEXT NOT NULL DEFAULT 'local' CHECK (source IN ('local', 'ldap'));
-- The directory's name for the user (their DN) as last seen, for the re-check and the users page.
ALTER TABLE users ADD COLUMN directory_dn TEXT;
-- When the directory last confirmed the user (sign-in or re-check), ms since the epoch.
ALTER TABLE users ADD COLUMN directory_checked_at INTEGER;
-- 1: disabled by a directory re-check (not by an administrator): a later sign-in the mapping accepts enables it again.
ALTER TABLE users ADD COLUMN directory_disabled INTEGER NOT NULL DEFAULT 0 CHECK (directory_disabled IN (0, 1));

CREATE TABLE audit_log_new (
  id         INTEGER PRIMARY KEY,
  at         INTEGER NOT NULL,
  user_id    INTEGER REFERENCES users(id) ON DELETE SET NULL,
  actor      TEXT NOT NULL,
  action     TEXT NOT NULL,
  target     TEXT NOT NULL DEFAULT '',
  details    TEXT NOT NULL DEFAULT '{}',
  door       TEXT NOT NULL DEFAULT 'web' CHECK (door IN ('api', 'web', 'cli', 'system', 'ldap')),
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
