// Queries of replication: whether the database changed since the last copy.
import type { DB } from '../../db/open';

/**
 * Changes this connection made since it opened, and PRAGMA data_version (bumped by every other connection's commit):
 * the pair is equal between two calls exactly when nobody committed anything in between.
 */
export function changeMarker(db: DB): string {
  const own = db.prepare('SELECT total_changes()').pluck().get() as number;
  const others = db.pragma('data_version', { simple: true }) as number;
  return `${own}:${others}`;
}
