-- A device's history version (the key of the rendered history-page cache, src/features/backups/history-pages.ts)
-- moves on ANY update of one of its backup rows, not only of the columns a page showed in 0005: a field added to
-- the backup DTO later can then never be served stale from the cache. Backup rows are updated rarely (a backup
-- finishing, an interrupted one closed), so the wider trigger costs nothing measurable.
DROP TRIGGER backups_history_version_update;
CREATE TRIGGER backups_history_version_update
  AFTER UPDATE ON backups
  WHEN NEW.device_id = OLD.device_id
BEGIN
  UPDATE device_backup_counts SET version = random() WHERE device_id = NEW.device_id;
END;
