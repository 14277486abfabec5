// Types and small helpers shared by the web interface's pages and internal /api/ routes.
import type { Context, MiddlewareHandler } from 'hono';
import { ApiError, type FieldError } from '../errors';
import type { AppEnv } from '../http/context';
import type { Permission } from '../identity/permissions';
import { allows, missingFor, type Operation } from '../identity/policy';
import { formatTimestamp } from '../lib/time';
import type { WebSession } from './session/sessions.service';

export interface WebEnv {
  Variables: AppEnv['Variables'] & {
    /** Set by the session middleware for every route behind the login. */
    session: WebSession;
  };
}

export type WebContext = Context<WebEnv>;

/** Route guard: the operation's policy entry (src/features/<f>/<f>.policy.ts), the one /api/v1 and the services read. */
export function need(op: Operation): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    const missing = missingFor(c.get('principal'), op);
    if (missing) throw new ApiError('PERMISSION_DENIED', `This page needs the permission ${missing}`, { permission: missing });
    await next();
  };
}

/** Whether to offer an operation (a button, a link): its policy entry, or a single permission for what a page shows. */
export function can(c: WebContext, op: Operation | Permission): boolean {
  return allows(c.get('principal'), op);
}

/** Field errors of a service's validation error, keyed by field, for showing next to each input. */
export function fieldErrors(err: unknown): Record<string, string> | null {
  if (!(err instanceof ApiError)) return null;
  if (err.code === 'VALIDATION_ERROR') {
    const out: Record<string, string> = {};
    for (const e of (err.details.errors as FieldError[] | undefined) ?? []) out[e.field.split('.')[0]] ??= e.message;
    if (Object.keys(out).length === 0) out._form = err.message;
    return out;
  }
  if (/_NAME_EXISTS$|USERNAME_EXISTS/.test(err.code)) return { name: err.message, username: err.message };
  if (err.status < 500) return { _form: err.message };
  return null;
}

/** A form's fields as strings (urlencoded or multipart bodies; files are ignored). */
export async function formFields(c: WebContext): Promise<Record<string, string>> {
  const body = await c.req.parseBody();
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(body)) if (typeof v === 'string') out[k] = v;
  return out;
}

export function intParam(c: WebContext, name: string): number {
  const v = Number(c.req.param(name));
  if (!Number.isSafeInteger(v) || v < 1) throw ApiError.notFound(name.replace(/_id$|Id$/, ''));
  return v;
}

/** A positive integer query value, or the default. */
export function intQuery(c: WebContext, name: string, dflt: number, max = Number.MAX_SAFE_INTEGER): number {
  const v = Number(c.req.query(name));
  return Number.isSafeInteger(v) && v >= 1 ? Math.min(v, max) : dflt;
}

/**
 * Timestamps in the user's zone, each with its zone's abbreviation ("2026-11-24 14:03:11 CET"): a time is read
 * correctly when copied out of the page, and the two sides of a daylight-saving change are told apart. The same
 * format everywhere so lists line up.
 */
export function formatTime(ms: number | null | undefined, tz: string): string {
  if (ms === null || ms === undefined) return '—';
  return `${formatTimestamp(ms, tz)} ${zoneAbbreviation(ms, tz)}`;
}

const zoneNamers = new Map<string, Intl.DateTimeFormat[]>();
const zoneNames = new Map<string, string>();
/** Bounds of the two caches: zones are validated IANA names; names per (zone, hour) are cleared when full. */
const MAX_ZONES = 1000;
const MAX_ZONE_NAMES = 20_000;

/** The zone's short name at an instant: "CET", "EST", "UTC", else the offset ("GMT+5:30"). Cached per zone and hour. */
export function zoneAbbreviation(ms: number, tz: string): string {
  const key = `${tz} ${Math.floor(ms / 3_600_000)}`;
  let name = zoneNames.get(key);
  if (name !== undefined) return name;
  let namers = zoneNamers.get(tz);
  if (!namers) {
    // British English names the European zones (CET, BST), American English the American ones (EST, PDT).
    namers = ['en-GB', 'en-US'].map((l) => new Intl.DateTimeFormat(l, { timeZone: tz, timeZoneName: 'short' }));
    if (zoneNamers.size >= MAX_ZONES) zoneNamers.clear();
    zoneNamers.set(tz, namers);
  }
  const names = namers.map((f) => f.formatToParts(ms).find((p) => p.type === 'timeZoneName')?.value ?? tz);
  name = names.find((n) => !/^GMT[+-]/.test(n)) ?? names[0];
  if (zoneNames.size >= MAX_ZONE_NAMES) zoneNames.clear();
  zoneNames.set(key, name);
  return name;
}
