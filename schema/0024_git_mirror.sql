-- 0024: the git mirror (docs/git-mirror.md). Versions wait in git_mirror_pending (in the order they were stored) until
-- they are committed to <data_dir>/git-mirror; git_mirror_commits records the commit of each backup, so a version
-- is never committed twice (the queue, the backfill and a restart all check it); git_mirror_remotes keeps what each
-- remote last accepted and why it last failed.

-- One row (id 1) while the mirror is enabled: the backup path queues versions only then, so a disabled mirror
-- grows no table. `overflowed` counts versions not queued because the queue was full (a backfill writes them).
CREATE TABLE git_mirror_state (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  enabled     INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  max_queue   INTEGER NOT NULL DEFAULT 100000,
  overflowed  INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE TABLE git_mirror_pending (
  seq        INTEGER PRIMARY KEY AUTOINCREMENT,
  backup_id  TEXT NOT NULL UNIQUE,
  queued_at  INTEGER NOT NULL
) STRICT;

-- No foreign key: the history in git outlives a backup record that retention removes.
CREATE TABLE git_mirror_commits (
  backup_id    TEXT PRIMARY KEY,
  commit_id    TEXT NOT NULL,
  path         TEXT NOT NULL,
  committed_at INTEGER NOT NULL
) STRICT;

CREATE TABLE git_mirror_remotes (
  url             TEXT PRIMARY KEY,
  pushed_commit   TEXT,
  pushed_at       INTEGER,
  attempts        INTEGER NOT NULL DEFAULT 0,
  next_attempt_at INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT,
  rejected        INTEGER NOT NULL DEFAULT 0,
  rejected_total  INTEGER NOT NULL DEFAULT 0,
  failures_total  INTEGER NOT NULL DEFAULT 0
) STRICT;

-- The job a version came from, found from its backup id (the commit message names it).
CREATE INDEX git_mirror_job_items_backup ON backup_job_items (backup_id) WHERE backup_id IS NOT NULL;
