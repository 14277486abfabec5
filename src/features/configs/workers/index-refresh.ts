// The line index's upkeep on a pool worker (its own database connection): stale devices' newest versions read, verified
// and written to the index, so neither the file reads nor the writes hold the event loop.
import { openDatabase, type DB } from '../../../db/open';
import { clearStale, commitIndexWithoutFsync, listStaleDevices, replaceDeviceEntry } from '../search-index.store';
import { indexLines, type IndexLinesDone } from './index-lines';

export interface IndexRefreshTask {
  dbFile: string;
  /** The SQLite addon (sqliteNativePath). */
  nativePath: string;
  snapshotsRoot: string;
  batch: number;
}

export interface IndexRefreshDone {
  /** Stale devices looked at (0: none was stale). */
  looked: number;
  problems: { deviceId: number; hash: string; problem: string }[];
}

/** One connection per database file for the worker's life. */
const connections = new Map<string, DB>();

/**
 * Up to `batch` stale devices get the lines of their newest version and leave the stale list, unless they changed
 * again meanwhile (they stay listed, and the search keeps reading their files). One device at a time: its file is
 * read before its write transaction, which holds the lock for that device's index writes only (at most
 * MAX_INDEXED_LINES lines, so a backup being recorded meanwhile waits briefly, never its busy timeout).
 */
export function refreshIndexStep(task: IndexRefreshTask): IndexRefreshDone {
  let db = connections.get(task.dbFile);
  if (!db) {
    db = openDatabase(task.dbFile, { nativePath: task.nativePath });
    commitIndexWithoutFsync(db);
    connections.set(task.dbFile, db);
  }
  const stale = listStaleDevices(db, task.batch);
  const problems: IndexRefreshDone['problems'] = [];
  const conn = db;
  for (const s of stale) {
    const read: IndexLinesDone[number] | null =
      s.present && s.hash !== null && s.hash !== s.indexed_hash ? indexLines({ snapshotsRoot: task.snapshotsRoot, hashes: [s.hash] })[0] : null;
    conn
      .transaction(() => {
        if (!s.present) replaceDeviceEntry(conn, s.device_id, null, null);
        else if (s.hash === null) replaceDeviceEntry(conn, s.device_id, null, []);
        else if (read) {
          if ('problem' in read) problems.push({ deviceId: s.device_id, hash: s.hash, problem: read.problem });
          if ('oversized' in read) replaceDeviceEntry(conn, s.device_id, s.hash, [], { scan: true });
          else replaceDeviceEntry(conn, s.device_id, s.hash, 'lines' in read ? read.lines : []);
        }
        clearStale(conn, s.device_id, s.seq);
      })
      .immediate();
  }
  return { looked: stale.length, problems };
}
