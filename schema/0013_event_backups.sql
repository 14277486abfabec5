-- 0013: backups started by a device's own change event (syslog): trigger 'event', and who changed the device
-- (`changed_by`, the user the device's message named; null when unknown or not an event backup).
--
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt with every row, index and trigger kept
-- (schema 0001 to 0005). src/db/migrate.ts runs this with foreign_keys OFF and PRAGMA foreign_key_check before COMMIT.
-- Rows are copied back BEFORE the triggers are recreated, so the counters they keep (backup_totals,
-- device_backup_counts, backup_outcome_buckets) are not counted twice.

-- An index or trigger on backups that this migration does not know would be dropped with the table and lost:
-- refuse to run rather than lose it.
CREATE TEMP TABLE migration_0013_guard (
  unknown INTEGER CONSTRAINT "0013 would drop an index or trigger on backups it does not recreate" CHECK (unknown = 0)
);
INSERT INTO migration_0013_guard (unknown)
  SELECT count(*) FROM sqlite_schema
   WHERE type IN ('index', 'trigger') AND sql IS NOT NULL AND tbl_name = 'backups'
     AND name NOT IN ('backups_started', 'backups_running', 'backups_snapshot', 'backups_changed_started', 'backups_device_history',
                      'backups_count_insert', 'backups_count_update', 'backups_count_delete', 'backups_outcome_insert',
                      'backups_outcome_update', 'backups_outcome_delete', 'backups_device_count_insert',
                      'backups_device_count_delete', 'backups_device_count_move', 'backups_history_version_update');
DROP TABLE migration_0013_guard;

CREATE TEMP TABLE migration_0013_backups AS SELECT * FROM main.backups;
DROP TABLE main.backups;
CREATE TABLE backups (
  id                   TEXT PRIMARY KEY,       -- UUID
  device_id            INTEGER NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
  template_id          INTEGER REFERENCES templates(id) ON DELETE SET NULL,
  trigger              TEXT NOT NULL CHECK (trigger IN ('schedule', 'manual', 'cli', 'import', 'api', 'event')),
  started_at           INTEGER NOT NULL,
  finished_at          INTEGER,
  success              INTEGER NOT NULL DEFAULT 0 CHECK (success IN (0, 1)),
  error_message        TEXT,
  failure_type         TEXT,
  duration_ms          INTEGER,
  config_snapshot_hash TEXT,
  config_size          INTEGER,
  change_fingerprint   TEXT,
  changed              INTEGER NOT NULL DEFAULT 0 CHECK (changed IN (0, 1)),
  changed_by           TEXT CHECK (changed_by IS NULL OR length(changed_by) BETWEEN 1 AND 128)
) STRICT;
INSERT INTO backups (id, device_id, template_id, trigger, started_at, finished_at, success, error_message, failure_type,
                     duration_ms, config_snapshot_hash, config_size, change_fingerprint, changed)
  SELECT id, device_id, template_id, trigger, started_at, finished_at, success, error_message, failure_type,
         duration_ms, config_snapshot_hash, config_size, change_fingerprint, changed
    FROM temp.migration_0013_backups ORDER BY rowid;
DROP TABLE temp.migration_0013_backups;

CREATE INDEX backups_started ON backups (started_at);
CREATE INDEX backups_running ON backups (device_id) WHERE finished_at IS NULL;
CREATE INDEX backups_snapshot ON backups (config_snapshot_hash) WHERE config_snapshot_hash IS NOT NULL;
CREATE INDEX backups_changed_started ON backups (started_at) WHERE changed = 1;
CREATE INDEX backups_device_history ON backups (device_id, started_at DESC, id DESC, finished_at, success, error_message, config_snapshot_hash);

CREATE TRIGGER backups_count_insert AFTER INSERT ON backups BEGIN
  UPDATE backup_totals SET total = total + 1, bytes_before_dedup = bytes_before_dedup + ifnull(NEW.config_size, 0) WHERE id = 1;
END;
CREATE TRIGGER backups_count_update AFTER UPDATE OF config_size ON backups BEGIN
  UPDATE backup_totals SET bytes_before_dedup = bytes_before_dedup - ifnull(OLD.config_size, 0) + ifnull(NEW.config_size, 0) WHERE id = 1;
END;
CREATE TRIGGER backups_count_delete AFTER DELETE ON backups BEGIN
  UPDATE backup_totals SET total = total - 1, bytes_before_dedup = bytes_before_dedup - ifnull(OLD.config_size, 0) WHERE id = 1;
END;
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
CREATE TRIGGER backups_device_count_insert AFTER INSERT ON backups BEGIN
  INSERT INTO device_backup_counts (device_id, total, version) VALUES (NEW.device_id, 1, random())
    ON CONFLICT (device_id) DO UPDATE SET total = total + 1, version = random();
END;
CREATE TRIGGER backups_device_count_delete AFTER DELETE ON backups BEGIN
  UPDATE device_backup_counts SET total = total - 1, version = random() WHERE device_id = OLD.device_id;
END;
CREATE TRIGGER backups_device_count_move AFTER UPDATE OF device_id ON backups BEGIN
  UPDATE device_backup_counts SET total = total - 1, version = random() WHERE device_id = OLD.device_id;
  INSERT INTO device_backup_counts (device_id, total, version) VALUES (NEW.device_id, 1, random())
    ON CONFLICT (device_id) DO UPDATE SET total = total + 1, version = random();
END;
CREATE TRIGGER backups_history_version_update
  AFTER UPDATE OF id, started_at, finished_at, success, error_message, config_snapshot_hash ON backups
  WHEN NEW.device_id = OLD.device_id
BEGIN
  UPDATE device_backup_counts SET version = random() WHERE device_id = NEW.device_id;
END;
