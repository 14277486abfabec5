// Snapshot texts read inside a worker thread (read, gunzip, hash check: ~0.1 s per 10 MB, never on the event loop), with a bounded cache.
import path from 'node:path';
import { SnapshotStore } from '../../../store/snapshots';
import { POOL_SIZE } from './pool';

// Snapshots are content-addressed, so a cached text can never be stale. The cap keeps memory bounded: 64 M characters
// over the whole pool, as the search cache of the main thread had before the search moved to the workers.
const CACHE_MAX_CHARS = Math.floor((64 * 1024 * 1024) / POOL_SIZE);
const cache = new Map<string, string>();
let cachedChars = 0;
const stores = new Map<string, SnapshotStore>();

/** The verified text of a snapshot, or null when the file is missing; SnapshotIntegrityError when it does not match. */
export function readSnapshotText(snapshotsRoot: string, hash: string): string | null {
  const hit = cache.get(hash);
  if (hit !== undefined) return hit;
  let store = stores.get(snapshotsRoot);
  if (!store) stores.set(snapshotsRoot, (store = new SnapshotStore(path.dirname(snapshotsRoot))));
  const text = store.read(hash);
  if (text !== null && text.length < CACHE_MAX_CHARS / 16) {
    while (cachedChars + text.length > CACHE_MAX_CHARS && cache.size) {
      const [k, v] = cache.entries().next().value as [string, string];
      cache.delete(k);
      cachedChars -= v.length;
    }
    cache.set(hash, text);
    cachedChars += text.length;
  }
  return text;
}
