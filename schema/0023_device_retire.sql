-- 0023: retired devices (issue 25). A retired device keeps its backup records (readable, searchable, diffable) but
-- leaves the schedules, event backups, probes and the problem lists: it is never enabled while retired, which every
-- query that picks devices to back up already reads. NULL: in service; else when it was retired (ms since the epoch).
ALTER TABLE devices ADD COLUMN retired_at INTEGER CHECK (retired_at IS NULL OR enabled = 0);
-- Who retired it (the audit trail has the full story; this is for the device page).
ALTER TABLE devices ADD COLUMN retired_by TEXT;
CREATE INDEX devices_retired ON devices (retired_at) WHERE retired_at IS NOT NULL;
