// How the audit trail reads to people: time filters typed by hand, and changes/details as "field: before → after".
import { formatTimestamp, parseLocalTimestamp } from '../../lib/time';
import type { AuditRow } from './audit.store';
import type { NamedKind } from './audit-names.store';

/** The name of a record that still exists (and the reader may see), or undefined: the page then shows its id. */
export type AuditNames = (kind: NamedKind, id: number) => string | undefined;

/** Targets that name a record by id ("device 18"). */
export const TARGET_ID = /^(device|group|credential|template) (\d+)$/;

/** Change fields holding the id of another record, and the kind of record each names. */
export const ID_FIELDS: Record<string, NamedKind> = { group_id: 'group', credential_id: 'credential', template_id: 'template', device_id: 'device' };

/** "device r1" for a target whose record still exists, "device 18 (deleted)" when it does not; other targets as recorded. */
export function describeTarget(target: string, names?: AuditNames): { text: string; href?: string } {
  const m = names ? TARGET_ID.exec(target) : null;
  if (!m || !names) return { text: target };
  const kind = m[1] as NamedKind;
  const id = Number(m[2]);
  const name = names(kind, id);
  if (name === undefined) return { text: `${target} (deleted)` };
  const href = kind === 'device' ? `/devices/${id}` : kind === 'template' ? `/templates/${id}` : undefined;
  return { text: `${kind} ${name}`, href };
}

const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * A point in time typed by a person: `YYYY-MM-DD` (midnight), `YYYY-MM-DD HH:MM[:SS]` (also with a `T`) in the
 * zone `tz`, or ISO 8601 with a zone (`Z`, `+02:00`). Null when it is none of these or not a real date.
 */
export function parseAuditTime(text: string, tz: string): number | null {
  const t = text.trim();
  if (ISO_WITH_ZONE.test(t)) {
    const ms = Date.parse(t);
    return Number.isFinite(ms) ? ms : null;
  }
  let m = /^(\d{4}-\d{2}-\d{2})$/.exec(t);
  if (m) return parseLocalTimestamp(`${m[1]} 00:00:00`, tz);
  m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2})(:\d{2})?$/.exec(t);
  if (m) return parseLocalTimestamp(`${m[1]} ${m[2]}${m[3] ?? ':00'}`, tz);
  return null;
}

/** Longest value shown in a cell; a template's whole command list is summarised, not dumped. */
const MAX_VALUE_CHARS = 200;

/**
 * A value as a person reads it: text as is, nothing as "—", a list as "a, b", a record as "key: value, ...",
 * a time field (`*_at`, epoch ms) in the zone `tz` when one is given; long values cut with "…".
 */
export function showValue(v: unknown, tz?: string, key = ''): string {
  const text = plain(v, tz, key);
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS - 1)}…` : text;
}

function plain(v: unknown, tz: string | undefined, key: string): string {
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v === 'string') return v;
  if (tz && typeof v === 'number' && key.endsWith('_at') && v > 1e11) return formatTimestamp(v, tz);
  if (Array.isArray(v)) return v.length ? v.map((x) => plain(x, tz, key)).join(', ') : '(none)';
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>);
    return entries.length ? entries.map(([k, x]) => `${k}: ${plain(x, tz, k)}`).join(', ') : '(none)';
  }
  return JSON.stringify(v);
}

function parseObject(json: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(json);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * One line per changed field: "name: old → new", "password: changed" for a secret, and for two lists of plain
 * values what was added and removed ("permissions: added devices.view; removed users.view"). `tz`: see showValue.
 */
export function describeChanges(changesJson: string, tz?: string, opts: { action?: string; names?: AuditNames } = {}): string[] {
  const entries = Object.entries(parseObject(changesJson)).map(([field, c]) => {
    const pair = c !== null && typeof c === 'object' ? (c as { before?: unknown; after?: unknown }) : {};
    return { field, secret: c === 'changed', before: pair.before ?? null, after: pair.after ?? null };
  });
  const named = (field: string, v: unknown) => nameOf(field, v, tz, opts.names);
  const label = (field: string) => (opts.names && ID_FIELDS[field] ? ID_FIELDS[field] : field);
  // A record created or deleted: one line with its fields, not one "— → value" line per field.
  const whole = opts.action && /\.(create|delete)$/.test(opts.action) ? (opts.action.endsWith('.create') ? 'after' : 'before') : null;
  if (whole && entries.length > 1) {
    const parts = entries
      // Empty and off values are the defaults of a new record; "enabled: false" is worth saying.
      .filter((e) => e.secret || (e[whole] !== null && e[whole] !== '' && (e[whole] !== false || e.field === 'enabled')))
      .map((e) => `${label(e.field)}: ${e.secret ? 'set' : named(e.field, e[whole])}`);
    return [`${whole === 'after' ? 'created with' : 'removed'} ${parts.join(', ')}`];
  }
  return entries.map((e) => {
    if (e.secret) return `${e.field}: changed`;
    const delta = listDelta(e.before, e.after);
    if (delta) return `${e.field}: ${delta}`;
    return `${label(e.field)}: ${named(e.field, e.before)} → ${named(e.field, e.after)}`;
  });
}

/** A value as shown, an id field's value as the name of what it names ("core-switches"), or "18 (deleted)". */
function nameOf(field: string, v: unknown, tz: string | undefined, names?: AuditNames): string {
  const kind = ID_FIELDS[field];
  if (!names || !kind || typeof v !== 'number') return showValue(v, tz, field);
  return names(kind, v) ?? `${v} (deleted)`;
}

/** "added x; removed y" between two lists of strings or numbers, or null when they are not such lists. */
function listDelta(before: unknown, after: unknown): string | null {
  const flat = (v: unknown): v is (string | number)[] => Array.isArray(v) && v.every((x) => typeof x === 'string' || typeof x === 'number');
  if (!flat(before) || !flat(after)) return null;
  const added = after.filter((x) => !before.includes(x));
  const removed = before.filter((x) => !after.includes(x));
  if (added.length === 0 && removed.length === 0) return 'order changed';
  return [added.length ? `added ${showValue(added)}` : '', removed.length ? `removed ${showValue(removed)}` : ''].filter(Boolean).join('; ');
}

/** The other facts of a row, "key: value" each. `tz`: see showValue. */
export function describeDetails(detailsJson: string, tz?: string): string[] {
  return Object.entries(parseObject(detailsJson)).map(([k, v]) => `${k}: ${showValue(v, tz, k)}`);
}

/** The door a change came through, with its reference ("api key 3", "web session ab12cd", "cli root"). */
export function describeDoor(r: Pick<AuditRow, 'door' | 'door_ref'>): string {
  return r.door_ref ? `${r.door} ${r.door_ref}` : r.door;
}

/** A row as plain data for machines (the CLI's --json): ISO time, changes and details parsed. */
export function auditRowJson(r: AuditRow, tz: string) {
  return {
    id: r.id,
    at: new Date(r.at).toISOString(),
    at_local: formatTimestamp(r.at, tz),
    actor: r.actor,
    user_id: r.user_id,
    door: r.door,
    door_ref: r.door_ref,
    request_id: r.request_id,
    action: r.action,
    target: r.target,
    changes: parseObject(r.changes),
    details: parseObject(r.details),
  };
}
