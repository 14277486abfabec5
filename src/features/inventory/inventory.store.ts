// SQL of inventory sources and the links from the devices a source created to the source's own ids (schema 0025).
import type { DB } from '../../db/open';
import type { SourceKind } from './inventory.schemas';

export interface SourceRow {
  id: number;
  name: string;
  kind: SourceKind;
  url: string;
  token_enc: Buffer | null;
  filters: string;
  mapping: string;
  credential_id: number | null;
  interval_minutes: number | null;
  last_sync_at: number | null;
  last_sync_error: string | null;
  created_at: number;
  updated_at: number;
  devices: number;
}

export type SourceWrite = Pick<SourceRow, 'kind' | 'url' | 'token_enc' | 'filters' | 'mapping' | 'credential_id' | 'interval_minutes'>;

const SELECT = `SELECT s.*, (SELECT count(*) FROM inventory_devices l WHERE l.source_id = s.id) AS devices FROM inventory_sources s`;

export function listSourceRows(db: DB): SourceRow[] {
  return db.prepare(`${SELECT} ORDER BY s.name COLLATE NOCASE`).all() as SourceRow[];
}

export function getSourceRow(db: DB, id: number): SourceRow | undefined {
  return db.prepare(`${SELECT} WHERE s.id = ?`).get(id) as SourceRow | undefined;
}

export function getSourceRowByName(db: DB, name: string): SourceRow | undefined {
  return db.prepare(`${SELECT} WHERE s.name = ? COLLATE NOCASE`).get(name) as SourceRow | undefined;
}

export function insertSourceRow(db: DB, name: string, w: SourceWrite, now = Date.now()): number {
  const info = db
    .prepare(
      `INSERT INTO inventory_sources (name, kind, url, token_enc, filters, mapping, credential_id, interval_minutes, created_at, updated_at)
       VALUES (@name, @kind, @url, @token_enc, @filters, @mapping, @credential_id, @interval_minutes, @now, @now)`,
    )
    .run({ name, ...w, now });
  return Number(info.lastInsertRowid);
}

export function updateSourceRow(db: DB, id: number, w: SourceWrite, now = Date.now()): void {
  db.prepare(
    `UPDATE inventory_sources SET kind = @kind, url = @url, token_enc = @token_enc, filters = @filters, mapping = @mapping,
       credential_id = @credential_id, interval_minutes = @interval_minutes, updated_at = @now WHERE id = @id`,
  ).run({ id, ...w, now });
}

export function deleteSourceRow(db: DB, id: number): boolean {
  return db.prepare('DELETE FROM inventory_sources WHERE id = ?').run(id).changes > 0;
}

export function recordSyncOutcome(db: DB, id: number, at: number, error: string | null): void {
  db.prepare('UPDATE inventory_sources SET last_sync_at = ?, last_sync_error = ? WHERE id = ?').run(at, error, id);
}

/** Sources with a schedule whose next sync is due at `now`. */
export function dueSourceIds(db: DB, now: number): number[] {
  return db
    .prepare(
      `SELECT id FROM inventory_sources WHERE interval_minutes IS NOT NULL
         AND (last_sync_at IS NULL OR last_sync_at + interval_minutes * 60000 <= ?) ORDER BY id`,
    )
    .pluck()
    .all(now) as number[];
}

/** A device a source created, as the sync compares it with the source. */
export interface LinkedDeviceRow {
  device_id: number;
  external_id: string;
  name: string;
  hostname: string;
  template_id: number;
  template: string;
  group_id: number | null;
  retired_at: number | null;
}

export function listLinkedDeviceRows(db: DB, sourceId: number): LinkedDeviceRow[] {
  return db
    .prepare(
      `SELECT l.device_id, l.external_id, d.name, d.hostname, d.template_id, t.name AS template, d.group_id, d.retired_at
         FROM inventory_devices l JOIN devices d ON d.id = l.device_id JOIN templates t ON t.id = d.template_id
        WHERE l.source_id = ?`,
    )
    .all(sourceId) as LinkedDeviceRow[];
}

export function insertLink(db: DB, sourceId: number, externalId: string, deviceId: number): void {
  db.prepare('INSERT INTO inventory_devices (device_id, source_id, external_id) VALUES (?, ?, ?)').run(deviceId, sourceId, externalId);
}

/** The source owning a device (null: a device managed by hand). */
export function deviceSourceName(db: DB, deviceId: number): string | null {
  const name = db
    .prepare('SELECT s.name FROM inventory_devices l JOIN inventory_sources s ON s.id = l.source_id WHERE l.device_id = ?')
    .pluck()
    .get(deviceId) as string | undefined;
  return name ?? null;
}

/** Template ids by name (case-insensitive, as names are unique). */
export function templateIdsByName(db: DB): Map<string, { id: number; name: string }> {
  const rows = db.prepare('SELECT id, name FROM templates').all() as { id: number; name: string }[];
  return new Map(rows.map((r) => [r.name.toLowerCase(), r]));
}

export function deviceIdByName(db: DB, name: string): number | undefined {
  return db.prepare('SELECT id FROM devices WHERE name = ? COLLATE NOCASE').pluck().get(name) as number | undefined;
}

/** Every group with its parent, to walk group paths. */
export function listGroupNodes(db: DB): { id: number; name: string; parent_id: number | null }[] {
  return db.prepare('SELECT id, name, parent_id FROM device_groups').all() as { id: number; name: string; parent_id: number | null }[];
}

export function credentialIdByName(db: DB, name: string): number | undefined {
  return db.prepare('SELECT id FROM credentials WHERE name = ? COLLATE NOCASE').pluck().get(name) as number | undefined;
}

export function credentialExistsById(db: DB, id: number): boolean {
  return db.prepare('SELECT 1 FROM credentials WHERE id = ?').get(id) !== undefined;
}
