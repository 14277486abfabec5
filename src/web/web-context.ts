// Types and small helpers shared by the web interface's pages and internal /api/ routes.
import type { Context, MiddlewareHandler } from 'hono';
import { ApiError, type FieldError } from '../errors';
import type { AppEnv } from '../http/context';
import type { Permission } from '../identity/permissions';
import type { WebSession } from './session/sessions.service';

export interface WebEnv {
  Variables: AppEnv['Variables'] & {
    /** Set by the session middleware for every route behind the login. */
    session: WebSession;
  };
}

export type WebContext = Context<WebEnv>;

/** Route guard with the permission names of the catalogue, as /api/v1 declares them. */
export function need(...permissions: Permission[]): MiddlewareHandler<WebEnv> {
  return async (c, next) => {
    const missing = permissions.find((p) => !c.get('principal').permissions.has(p));
    if (missing) throw new ApiError('PERMISSION_DENIED', `This page needs the permission ${missing}`, { permission: missing });
    await next();
  };
}

export function can(c: WebContext, p: Permission): boolean {
  return c.get('principal').permissions.has(p);
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

/** Timestamps in the user's zone; the same format everywhere so lists line up. */
export function formatTime(ms: number | null | undefined, tz: string): string {
  if (ms === null || ms === undefined) return '—';
  return new Intl.DateTimeFormat('en-CA', {
    timeZone: tz,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
  })
    .format(ms)
    .replace(',', '');
}
