-- 0003: sessions of the web interface, and an index behind its dashboard's "changes per day" chart.

-- The session id itself is never stored: only its SHA-256, so a copy of the database cannot be used to log in.
CREATE TABLE web_sessions (
  id_hash      BLOB PRIMARY KEY,
  user_id      INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  csrf_token   TEXT NOT NULL,                 -- synchronizer token for this session's state-changing requests
  created_at   INTEGER NOT NULL,
  last_seen_at INTEGER NOT NULL,              -- idle expiry counts from here
  expires_at   INTEGER NOT NULL,              -- absolute expiry, fixed at login
  address      TEXT NOT NULL DEFAULT '',
  user_agent   TEXT NOT NULL DEFAULT ''
) STRICT, WITHOUT ROWID;
CREATE INDEX web_sessions_user ON web_sessions (user_id);
CREATE INDEX web_sessions_expires ON web_sessions (expires_at);

-- Changed versions are rare among backups: counting them per day over 30 days reads only this small index.
CREATE INDEX backups_changed_started ON backups (started_at) WHERE changed = 1;
