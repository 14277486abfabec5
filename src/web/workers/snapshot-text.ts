// Snapshot texts read inside a worker thread (read, gunzip, hash check: ~0.1 s per 10 MB, never on the event loop), with a bounded cache.
import path from 'node:path';
import { SnapshotStore } from '../../store/snapshots';

// Snapshots are content-addressed, so a cached text can never be stale; the cap keeps each worker's memory bounded.
const CACHE_MAX_CHARS = 32 * 1024 * 1024;
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
