-- 0029: an index of the lines of every device's newest configuration, for the configuration search (issue #27;
-- docs/search-index.md). Distinct lines once each (configurations repeat most of their lines), a trigram full-text
-- index over their lower-cased text, and which device's newest version holds which line. Filled and kept current by
-- the appliance in the background: a device is listed in search_stale until its entry matches its newest version,
-- and the search reads the stale ones' files as before.
CREATE TABLE search_lines (
  id INTEGER PRIMARY KEY,
  text TEXT NOT NULL UNIQUE
) STRICT;

-- Lower-cased (JavaScript toLowerCase, as the search compares), rowid = search_lines.id; holds no text of its own.
CREATE VIRTUAL TABLE search_lines_fts USING fts5(folded, content = '', contentless_delete = 1, tokenize = 'trigram case_sensitive 1');

CREATE TABLE search_postings (
  line_id INTEGER NOT NULL,
  device_id INTEGER NOT NULL,
  PRIMARY KEY (line_id, device_id)
) STRICT, WITHOUT ROWID;

-- The version each device's postings come from (hash null: no successful backup) and its line ids (a JSON array).
-- scan = 1: the version is too big to index (more than the upkeep's bound of lines or bytes, search-index.md); the
-- search reads its file instead, as for a stale device.
CREATE TABLE search_docs (
  device_id INTEGER PRIMARY KEY,
  hash TEXT,
  line_ids TEXT NOT NULL,
  scan INTEGER NOT NULL DEFAULT 0 CHECK (scan IN (0, 1))
) STRICT;
-- The devices with a version in the index, counted without reading the line ids.
-- Both partial indexes keep the search's counts off the table's rows (each holds its device's line ids).
CREATE INDEX search_docs_versions ON search_docs (device_id) WHERE hash IS NOT NULL AND scan = 0;
CREATE INDEX search_docs_scan ON search_docs (device_id) WHERE scan = 1;

-- Devices whose newest version may differ from their entry; seq tells a later change from the one being indexed.
CREATE TABLE search_stale (
  device_id INTEGER PRIMARY KEY,
  seq INTEGER NOT NULL
) STRICT;

-- The backfill: every device, indexed in the background after the upgrade (resumable: the list is the progress).
INSERT INTO search_stale (device_id, seq) SELECT id, 0 FROM devices;

-- Whatever changes a device's newest successful version (a backup ending, an import, retention, a deletion) lists it.
CREATE TRIGGER search_stale_backup_insert AFTER INSERT ON backups WHEN NEW.success = 1
BEGIN
  INSERT INTO search_stale (device_id, seq) VALUES (NEW.device_id, 0) ON CONFLICT (device_id) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER search_stale_backup_update AFTER UPDATE OF success, config_snapshot_hash, started_at, device_id ON backups
  WHEN (NEW.success = 1 OR OLD.success = 1)
   AND (NEW.success IS NOT OLD.success OR NEW.config_snapshot_hash IS NOT OLD.config_snapshot_hash
        OR NEW.started_at IS NOT OLD.started_at OR NEW.device_id IS NOT OLD.device_id)
BEGIN
  INSERT INTO search_stale (device_id, seq) VALUES (NEW.device_id, 0) ON CONFLICT (device_id) DO UPDATE SET seq = seq + 1;
  INSERT INTO search_stale (device_id, seq) VALUES (OLD.device_id, 0) ON CONFLICT (device_id) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER search_stale_backup_delete AFTER DELETE ON backups WHEN OLD.success = 1
BEGIN
  INSERT INTO search_stale (device_id, seq) VALUES (OLD.device_id, 0) ON CONFLICT (device_id) DO UPDATE SET seq = seq + 1;
END;

CREATE TRIGGER search_stale_device_delete AFTER DELETE ON devices
BEGIN
  INSERT INTO search_stale (device_id, seq) VALUES (OLD.id, 0) ON CONFLICT (device_id) DO UPDATE SET seq = seq + 1;
END;
