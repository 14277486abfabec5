-- 0002: counters kept by triggers so that paged history and statistics never count or scan large ranges of backups.

-- Records per device: the `total` of a device's paged history in one lookup (counting 100,000 index
-- entries costs several milliseconds; this costs microseconds).
CREATE TABLE device_backup_counts (
  device_id INTEGER PRIMARY KEY REFERENCES devices(id) ON DELETE CASCADE,
  total     INTEGER NOT NULL
) STRICT;
INSERT INTO device_backup_counts (device_id, total) SELECT device_id, count(*) FROM backups GROUP BY device_id;

CREATE TRIGGER backups_device_count_insert AFTER INSERT ON backups BEGIN
  INSERT INTO device_backup_counts (device_id, total) VALUES (NEW.device_id, 1)
    ON CONFLICT (device_id) DO UPDATE SET total = total + 1;
END;
CREATE TRIGGER backups_device_count_delete AFTER DELETE ON backups BEGIN
  UPDATE device_backup_counts SET total = total - 1 WHERE device_id = OLD.device_id;
END;
CREATE TRIGGER backups_device_count_move AFTER UPDATE OF device_id ON backups BEGIN
  UPDATE device_backup_counts SET total = total - 1 WHERE device_id = OLD.device_id;
  INSERT INTO device_backup_counts (device_id, total) VALUES (NEW.device_id, 1)
    ON CONFLICT (device_id) DO UPDATE SET total = total + 1;
END;

-- Finished records by outcome in 10-minute buckets of started_at (started_at / 600000). "Last 24 hours"
-- statistics add up the 144 buckets and count only the partial bucket at the window's start exactly,
-- whatever the backup rate (scanning a day of records at 10,000 devices x hourly costs ~200 ms).
CREATE TABLE backup_outcome_buckets (
  bucket    INTEGER PRIMARY KEY,
  succeeded INTEGER NOT NULL,
  failed    INTEGER NOT NULL
) STRICT;
INSERT INTO backup_outcome_buckets (bucket, succeeded, failed)
  SELECT started_at / 600000, sum(success), sum(1 - success) FROM backups WHERE finished_at IS NOT NULL GROUP BY started_at / 600000;

CREATE TRIGGER backups_outcome_insert AFTER INSERT ON backups WHEN NEW.finished_at IS NOT NULL BEGIN
  INSERT INTO backup_outcome_buckets (bucket, succeeded, failed) VALUES (NEW.started_at / 600000, NEW.success, 1 - NEW.success)
    ON CONFLICT (bucket) DO UPDATE SET succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed;
END;
CREATE TRIGGER backups_outcome_update AFTER UPDATE OF started_at, finished_at, success ON backups BEGIN
  UPDATE backup_outcome_buckets SET succeeded = succeeded - OLD.success, failed = failed - (1 - OLD.success)
   WHERE OLD.finished_at IS NOT NULL AND bucket = OLD.started_at / 600000;
  INSERT INTO backup_outcome_buckets (bucket, succeeded, failed)
    SELECT NEW.started_at / 600000, NEW.success, 1 - NEW.success WHERE NEW.finished_at IS NOT NULL
    ON CONFLICT (bucket) DO UPDATE SET succeeded = succeeded + excluded.succeeded, failed = failed + excluded.failed;
END;
CREATE TRIGGER backups_outcome_delete AFTER DELETE ON backups WHEN OLD.finished_at IS NOT NULL BEGIN
  UPDATE backup_outcome_buckets SET succeeded = succeeded - OLD.success, failed = failed - (1 - OLD.success)
   WHERE bucket = OLD.started_at / 600000;
END;

-- Snapshot files and their bytes on disk, so storage statistics do not sum the snapshots table.
CREATE TABLE snapshot_totals (
  id           INTEGER PRIMARY KEY CHECK (id = 1),
  files        INTEGER NOT NULL,
  bytes_stored INTEGER NOT NULL
) STRICT;
INSERT INTO snapshot_totals (id, files, bytes_stored) SELECT 1, count(*), ifnull(sum(stored_size), 0) FROM snapshots;

CREATE TRIGGER snapshots_total_insert AFTER INSERT ON snapshots BEGIN
  UPDATE snapshot_totals SET files = files + 1, bytes_stored = bytes_stored + NEW.stored_size WHERE id = 1;
END;
CREATE TRIGGER snapshots_total_update AFTER UPDATE OF stored_size ON snapshots BEGIN
  UPDATE snapshot_totals SET bytes_stored = bytes_stored - OLD.stored_size + NEW.stored_size WHERE id = 1;
END;
CREATE TRIGGER snapshots_total_delete AFTER DELETE ON snapshots BEGIN
  UPDATE snapshot_totals SET files = files - 1, bytes_stored = bytes_stored - OLD.stored_size WHERE id = 1;
END;
