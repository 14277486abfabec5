-- 0017: backup jobs: one row per request to back up devices now (a selection, a group, everything), with one item per device.

-- A job is run by one process (`serve`, or the CLI's `backup run --wait`), named by `owner` while it runs; that process
-- renews heartbeat_at every few seconds. A running job whose heartbeat stopped (the process died) is closed as
-- interrupted by the next process that looks. A queued job (owner null) waits for the running server to claim it.
CREATE TABLE backup_jobs (
  id               TEXT PRIMARY KEY,  -- UUID
  selection        TEXT NOT NULL CHECK (selection IN ('devices', 'group', 'all')),
  group_id         INTEGER,           -- the group of a 'group' selection (kept when the group is deleted later)
  label            TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 200),
  requested_by     TEXT NOT NULL,     -- the user name, or cli:<os user>
  user_id          INTEGER,           -- the requesting user's id; null for the console and the appliance
  door             TEXT NOT NULL CHECK (door IN ('api', 'web', 'cli', 'system')),
  state            TEXT NOT NULL CHECK (state IN ('queued', 'running', 'finished', 'cancelled', 'interrupted')),
  owner            TEXT,
  heartbeat_at     INTEGER,
  created_at       INTEGER NOT NULL,
  started_at       INTEGER,
  finished_at      INTEGER,
  cancelled_by     TEXT
) STRICT;
CREATE INDEX backup_jobs_created ON backup_jobs (created_at DESC);
-- The server's poll for queued jobs (every second) and the sweep of dead running ones read only these small indexes.
CREATE INDEX backup_jobs_queued ON backup_jobs (created_at) WHERE state = 'queued';
CREATE INDEX backup_jobs_running ON backup_jobs (heartbeat_at) WHERE state = 'running';

-- One device of a job. device_name and group_id are copied at request time: the job still reads after a device
-- is renamed, moved or deleted, and a scoped user sees the items of their groups.
CREATE TABLE backup_job_items (
  job_id           TEXT NOT NULL REFERENCES backup_jobs(id) ON DELETE CASCADE,
  device_id        INTEGER NOT NULL,
  device_name      TEXT NOT NULL,
  group_id         INTEGER,
  state            TEXT NOT NULL CHECK (state IN ('queued', 'running', 'retrying', 'succeeded', 'failed', 'skipped', 'cancelled', 'interrupted')),
  outcome          TEXT CHECK (outcome IN ('first', 'changed', 'unchanged')),
  attempt          INTEGER NOT NULL DEFAULT 0,
  reason           TEXT,              -- the last retry's cause ("connection refused"), kept after the end
  message          TEXT,              -- failed, skipped, cancelled, interrupted: what happened
  failure_type     TEXT,
  backup_id        TEXT,              -- the backup record this item made (successful or failed)
  cancel_requested INTEGER NOT NULL DEFAULT 0 CHECK (cancel_requested IN (0, 1)),
  started_at       INTEGER,
  finished_at      INTEGER,
  PRIMARY KEY (job_id, device_id)
) STRICT, WITHOUT ROWID;
