-- 0030: a counter of changes to what the backup schedule reads (issue #22; docs/performance.md). Every device's
-- effective schedule is read from 100,000 rows; the scheduler reads it again only when this counter moved, so its
-- minute re-read and each firing cost one row lookup while no device, group or schedule changed.
CREATE TABLE schedule_version (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
) STRICT;
INSERT INTO schedule_version (id, version) VALUES (1, 0);

CREATE TRIGGER schedule_version_device_insert AFTER INSERT ON devices
BEGIN
  UPDATE schedule_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER schedule_version_device_delete AFTER DELETE ON devices
BEGIN
  UPDATE schedule_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER schedule_version_device_update AFTER UPDATE OF id, enabled, schedule, group_id ON devices
  WHEN NEW.id IS NOT OLD.id OR NEW.enabled IS NOT OLD.enabled OR NEW.schedule IS NOT OLD.schedule OR NEW.group_id IS NOT OLD.group_id
BEGIN
  UPDATE schedule_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER schedule_version_group_insert AFTER INSERT ON device_groups
BEGIN
  UPDATE schedule_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER schedule_version_group_delete AFTER DELETE ON device_groups
BEGIN
  UPDATE schedule_version SET version = version + 1 WHERE id = 1;
END;

CREATE TRIGGER schedule_version_group_update AFTER UPDATE OF id, parent_id, schedule ON device_groups
  WHEN NEW.id IS NOT OLD.id OR NEW.parent_id IS NOT OLD.parent_id OR NEW.schedule IS NOT OLD.schedule
BEGIN
  UPDATE schedule_version SET version = version + 1 WHERE id = 1;
END;
