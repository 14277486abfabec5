-- 0005: a version per device history, so a rendered page of it can be reused until the history changes.

-- `version` takes a new random value in the same statement as any change to the device's records: a record added,
-- deleted, moved, or any column a history page shows. Random rather than counted: a device id that SQLite reuses
-- after a delete can never meet a version its predecessor had (a collision is a 1 in 2^64 event).
ALTER TABLE device_backup_counts ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
UPDATE device_backup_counts SET version = random();

DROP TRIGGER backups_device_count_insert;
CREATE TRIGGER backups_device_count_insert AFTER INSERT ON backups BEGIN
  INSERT INTO device_backup_counts (device_id, total, version) VALUES (NEW.device_id, 1, random())
    ON CONFLICT (device_id) DO UPDATE SET total = total + 1, version = random();
END;

DROP TRIGGER backups_device_count_delete;
CREATE TRIGGER backups_device_count_delete AFTER DELETE ON backups BEGIN
  UPDATE device_backup_counts SET total = total - 1, version = random() WHERE device_id = OLD.device_id;
END;

DROP TRIGGER backups_device_count_move;
CREATE TRIGGER backups_device_count_move AFTER UPDATE OF device_id ON backups BEGIN
  UPDATE device_backup_counts SET total = total - 1, version = random() WHERE device_id = OLD.device_id;
  INSERT INTO device_backup_counts (device_id, total, version) VALUES (NEW.device_id, 1, random())
    ON CONFLICT (device_id) DO UPDATE SET total = total + 1, version = random();
END;

-- Every other column a history page shows (a running backup finishing, an interrupted one closed).
CREATE TRIGGER backups_history_version_update
  AFTER UPDATE OF id, started_at, finished_at, success, error_message, config_snapshot_hash ON backups
  WHEN NEW.device_id = OLD.device_id
BEGIN
  UPDATE device_backup_counts SET version = random() WHERE device_id = NEW.device_id;
END;
