-- 0021: TOTP second factor for local users (issue 24), and the short-lived state between password and code at sign-in.

-- The TOTP secret, encrypted with the master key (as device credentials are). Set at enrolment start; in force only
-- once totp_enabled_at is set (the user confirmed a first code). totp_last_step: the 30-second step of the last code
-- accepted, so the same code (or an older one) is refused when replayed.
ALTER TABLE users ADD COLUMN totp_secret BLOB;
ALTER TABLE users ADD COLUMN totp_enabled_at INTEGER;
ALTER TABLE users ADD COLUMN totp_last_step INTEGER NOT NULL DEFAULT 0;

-- Ten single-use recovery codes per enrolment, stored as argon2 hashes (like passwords); used_at set when spent.
CREATE TABLE user_recovery_codes (
  id        INTEGER PRIMARY KEY,
  user_id   INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  code_hash TEXT NOT NULL,
  used_at   INTEGER
) STRICT;
CREATE INDEX user_recovery_codes_user ON user_recovery_codes (user_id);

-- A password proved, a code still owed: not a session. Looked up by the SHA-256 of its cookie value; a few minutes
-- and a few code attempts, then the password must be given again.
CREATE TABLE login_challenges (
  id_hash    BLOB PRIMARY KEY,
  user_id    INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  expires_at INTEGER NOT NULL,
  attempts   INTEGER NOT NULL DEFAULT 0,
  address    TEXT NOT NULL DEFAULT ''
) STRICT, WITHOUT ROWID;
CREATE INDEX login_challenges_user ON login_challenges (user_id);
