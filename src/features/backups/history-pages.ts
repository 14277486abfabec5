// Rendered pages of the public backup history: the JSON body of a page, reused while its device's history version stands.
import type { DB } from '../../db/open';
import { tuningOf } from '../../db/tuning';
import { pagination, toJsonText, type JsonText } from '../../http/openapi';
import type { Principal } from '../../identity/principal';
import { authorize } from '../../identity/policy';
import { BACKUP_OPS } from './backups.policy';
import { toBackupRecordDto, type BackupHistoryPage } from './backups.schemas';
import { checkDeviceHistory, listDeviceBackups } from './backups.service';

/** Characters of rendered JSON kept per database handle (one-byte strings: about as many bytes); ~4,000 pages of 10. */
const MAX_CACHED_CHARS = 8_000_000;

interface RenderedPage {
  version: number;
  body: JsonText<BackupHistoryPage>;
}

/**
 * The oldest pages go first once the size bound is reached (a Map iterates in insertion order). A hit does not
 * move its page: deleting and re-adding a key on every request makes V8 rebuild the Map's table again and again.
 */
class RenderedPageCache {
  private readonly pages = new Map<string, RenderedPage>();
  private chars = 0;

  get(key: string, version: number): JsonText<BackupHistoryPage> | undefined {
    const hit = this.pages.get(key);
    return hit !== undefined && hit.version === version ? hit.body : undefined;
  }

  set(key: string, version: number, body: JsonText<BackupHistoryPage>): void {
    const old = this.pages.get(key);
    if (old) {
      this.chars -= old.body.length;
      this.pages.delete(key);
    }
    if (body.length > MAX_CACHED_CHARS / 16) return; // a handful of huge pages must not push out thousands of small ones
    this.pages.set(key, { version, body });
    this.chars += body.length;
    for (const [k, page] of this.pages) {
      if (this.chars <= MAX_CACHED_CHARS) break;
      this.pages.delete(k);
      this.chars -= page.body.length;
    }
  }
}

// A closed handle's entry goes with it.
const caches = new WeakMap<DB, RenderedPageCache>();

/**
 * The JSON body of one page of a device's history (spec 4.3) with its times in zone `tz`. The device and the
 * caller's scope are checked on every call (one indexed read); the page is rendered once per history version,
 * page, limit and zone. Any change to a device's records gives its history a new version in the same transaction
 * (schema/0005 triggers), whichever process makes it, so a reused page is never stale: an integration polling
 * histories that did not change costs that one read per request.
 */
export function renderHistoryPage(db: DB, reader: Principal, deviceId: number, page: number, limit: number, tz: string): JsonText<BackupHistoryPage> {
  let cache = caches.get(db);
  if (!cache && tuningOf(db).historyPageCache) caches.set(db, (cache = new RenderedPageCache()));
  const key = `${deviceId}/${page}/${limit}/${tz}`;
  authorize(reader, BACKUP_OPS.list);
  const head = checkDeviceHistory(db, reader.scope, deviceId);
  if (head.version !== null) {
    const body = cache?.get(key, head.version);
    if (body !== undefined) return body;
  }
  const read = listDeviceBackups(db, reader.scope, deviceId, page, limit);
  const body = toJsonText<BackupHistoryPage>({ items: read.items.map((r) => toBackupRecordDto(r, tz)), pagination: pagination(page, limit, read.total) });
  if (read.version !== null) cache?.set(key, read.version, body);
  return body;
}
