-- 0028: each device's last backup outcome and start on its own row (issue #27; figures in docs/benchmarks.md, "Scale of
-- the inventory"). The web list's "by last backup" order and "failed only" filter looked up every device's last backup
-- record (100,000 primary-key lookups at 100,000 devices, p95 about 300 ms); they now read these columns, which the
-- backups store sets with last_backup_id in the transaction that records the backup's end.
ALTER TABLE devices ADD COLUMN last_backup_started_at INTEGER;
ALTER TABLE devices ADD COLUMN last_backup_success INTEGER CHECK (last_backup_success IS NULL OR last_backup_success IN (0, 1));
UPDATE devices
   SET last_backup_started_at = (SELECT b.started_at FROM backups b WHERE b.id = devices.last_backup_id),
       last_backup_success = (SELECT b.success FROM backups b WHERE b.id = devices.last_backup_id)
 WHERE last_backup_id IS NOT NULL;
-- "By last backup": a narrow covering index to read the sort key, name and filters instead of the wide rows.
CREATE INDEX devices_last_backup ON devices (last_backup_started_at, name, hostname, group_id, retired_at);
-- "Failed only" (about 6 % of the devices): only those, in name order, with what the list's filters read.
CREATE INDEX devices_last_failed ON devices (name, hostname, group_id, retired_at) WHERE last_backup_success = 0;
