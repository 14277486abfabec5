// How the audit trail reads to people: time filters typed by hand, and changes/details as "field: before → after".
import { formatTimestamp, parseLocalTimestamp } from '../../lib/time';
import type { AuditRow } from './audit.store';

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

/** A value as a person reads it: text as is, nothing as "—", anything else as compact JSON. */
export function showValue(v: unknown): string {
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v === 'string') return v;
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

/** One line per changed field: "name: old → new", or "password: changed" for a secret. */
export function describeChanges(changesJson: string): string[] {
  return Object.entries(parseObject(changesJson)).map(([field, c]) => {
    if (c === 'changed') return `${field}: changed`;
    const pair = c !== null && typeof c === 'object' ? (c as { before?: unknown; after?: unknown }) : {};
    return `${field}: ${showValue(pair.before)} → ${showValue(pair.after)}`;
  });
}

/** The other facts of a row, "key: value" each. */
export function describeDetails(detailsJson: string): string[] {
  return Object.entries(parseObject(detailsJson)).map(([k, v]) => `${k}: ${showValue(v)}`);
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
