// Generic request middleware and gate checks: request id, access log, request time zone, JSON bodies, permission guard
// (API-key authentication, which needs the keys feature, is in src/app/api-key-auth.ts).
import { matchedRoutes } from 'hono/route';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, MiddlewareHandler } from 'hono';
import { accessLogWriter } from '../lib/logger';
import { errorResponse, toApiError } from './errors';
import { isValidTimeZone } from '../config/config';
import { ApiError } from '../errors';
import { clientOf } from './client';
import { malformedTarget } from './malformed';
import type { Permission } from '../identity/permissions';
import type { Operation } from '../identity/policy';
import type { AppEnv, AppServices } from './context';
import type { MethodTable } from './methods';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

interface NodeBindings {
  incoming?: IncomingMessage;
  outgoing?: ServerResponse;
}

/**
 * A request header by its lower-case name. Behind @hono/node-server it is read from Node's own request: `c.req.header()`
 * builds a WHATWG Headers object of every header first, a cost on every request of the API.
 */
export function requestHeader(c: Context, name: string): string | undefined {
  const incoming = (c.env as NodeBindings | undefined)?.incoming;
  if (!incoming) return c.req.header(name);
  const v = incoming.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

/**
 * Headers every response carries, set before the handler so that each response made for this request has them,
 * an error or a HEAD answer too. Behind @hono/node-server they go on Node's response, which merges them into the
 * status line's headers: the handler's response then keeps the plain header object it was made with, where
 * `c.header()` would turn it into a Headers instance, built and converted back for every response.
 */
function setEnvelopeHeaders(c: Context, headers: Record<string, string>): void {
  const outgoing = (c.env as NodeBindings | undefined)?.outgoing;
  for (const name in headers) {
    if (outgoing) outgoing.setHeader(name, headers[name]);
    else c.header(name, headers[name]);
  }
}

/**
 * What every request gets: its id (a well-formed incoming X-Request-ID is echoed, otherwise one is made), the
 * services, the headers of every response, the API's gate for a request under its prefix, and one JSON access-log
 * line. The line never holds the query string (it may carry a mistaken key) nor any body.
 */
export function requestEnvelope(
  app: AppServices,
  api: { prefix: string; gate: MiddlewareHandler<AppEnv>; methods: MethodTable },
  /** Told of every finished request (metrics), with the route pattern that answered it ("unmatched" for none). */
  onDone?: (method: string, route: string, status: number, seconds: number) => void,
): MiddlewareHandler<AppEnv> {
  const writeAccessLog = accessLogWriter(app.log);
  return async (c, next) => {
    const start = performance.now();
    const incoming = requestHeader(c, 'x-request-id');
    const id = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    c.set('requestId', id);
    c.set('app', app);
    setEnvelopeHeaders(c, { 'X-Request-ID': id, 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' });
    const path = c.req.path;
    const method = c.req.method;
    const malformed = malformedTarget((c.env as NodeBindings | undefined)?.incoming);
    if (malformed !== undefined) {
      const outgoing = (c.env as NodeBindings | undefined)?.outgoing;
      if (outgoing) outgoing.shouldKeepAlive = false;
      c.res = errorResponse(c, new ApiError('BAD_REQUEST', malformed));
    } else if (path === api.prefix || path.startsWith(`${api.prefix}/`)) {
      // The API's gate runs here rather than as a middleware of its own: one asynchronous step less on every API
      // request. What it throws is answered as Hono answers an error thrown by a middleware.
      try {
        // A wrong method on a known path is a 405 before anything reads its body or matches a parameter route
        // (GET and HEAD, the common case, reach a 405 through the 404 handler instead).
        if (method !== 'GET' && method !== 'HEAD') api.methods.check(method, path);
        await api.gate(c, next);
      } catch (err) {
        c.res = errorResponse(c, toApiError(c, err));
      }
    } else {
      // The web interface's internal /api/ routes: a wrong method is refused before the session gate reads a body.
      const refused = method !== 'GET' && method !== 'HEAD' && path.startsWith('/api/') ? api.methods.refusal(method, path) : null;
      if (refused) c.res = errorResponse(c, refused);
      else await next();
    }
    const status = c.res.status;
    const ms = performance.now() - start;
    if (onDone) onDone(method, matchedRoutes(c).find((r) => r.method !== 'ALL')?.path ?? 'unmatched', status, ms / 1000);
    writeAccessLog({
      request_id: id,
      method,
      path,
      status,
      duration_ms: Math.round(ms * 100) / 100,
      user: c.get('principal')?.username,
      client: clientOf(c, app.config.server.trusted_proxies).address,
    });
  };
}

// Zone names already found valid: checking one builds an Intl.DateTimeFormat (~0.1 ms), a clear cost on every
// request that names its zone. Bounded, since the header is client input (there are about 600 IANA names).
const validZones = new Set<string>();
const MAX_REMEMBERED_ZONES = 1000;

function isKnownTimeZone(tz: string): boolean {
  if (validZones.has(tz)) return true;
  if (!isValidTimeZone(tz)) return false;
  if (validZones.size < MAX_REMEMBERED_ZONES) validZones.add(tz);
  return true;
}

/** The request's time zone: X-Timezone header, else the key owner's preference, else the appliance's. */
export function setRequestTimezone(c: Context<AppEnv>): void {
  const header = requestHeader(c, 'x-timezone')?.trim();
  if (header) {
    if (!isKnownTimeZone(header)) {
      throw ApiError.validation([{ field: 'X-Timezone', message: `unknown IANA time zone "${header.slice(0, 64)}"` }], 'Unknown time zone');
    }
    c.set('timezone', header);
  } else {
    c.set('timezone', c.get('principal')?.timezone || c.get('app').config.server.timezone);
  }
}

/** The principal must hold the permission (403 PERMISSION_DENIED). */
export function checkPermission(c: Context<AppEnv>, permission: Permission): void {
  if (!c.get('principal')?.permissions.has(permission)) {
    throw new ApiError('PERMISSION_DENIED', `This operation needs the permission ${permission}`, { permission });
  }
}

export type PermissionGuard = MiddlewareHandler<AppEnv> & { readonly permissions: readonly Permission[]; readonly operation: Operation };

/**
 * Route guard: the principal must hold the operation's permissions (its policy entry, next to its feature).
 * Declared where each route is registered; it names its permissions so that registerRoute (route.ts) can check
 * them in the route's own handler.
 */
export function requirePermission(op: Operation): PermissionGuard {
  const guard: MiddlewareHandler<AppEnv> = (c, next) => {
    for (const p of op.permissions) checkPermission(c, p);
    return next();
  };
  return Object.assign(guard, { permissions: op.permissions, operation: op });
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });
// A UTF-16 half without its other half: JSON's \uD800 escapes can spell one even in valid UTF-8.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** No request body of the API nests nearly this deep; 1 MB of "[[[[…" took a second of the event loop to refuse. */
const MAX_JSON_DEPTH = 32;

/** Whether JSON text opens more than `max` arrays or objects at once (strings skipped); one pass, before parsing. */
export function jsonNestingExceeds(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (ch === 0x22) {
      // Skip the string: to the next quote not escaped by a backslash.
      for (i++; i < text.length; i++) {
        const c = text.charCodeAt(i);
        if (c === 0x5c) i++;
        else if (c === 0x22) break;
      }
    } else if (ch === 0x5b || ch === 0x7b) {
      if (++depth > max) return true;
    } else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return false;
}

/** Why a string of a JSON body cannot be stored as text, or null. */
function textProblem(s: string): string | null {
  if (s.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(s)) return 'contains an unpaired UTF-16 surrogate (not text)';
  return null;
}

/** The first string (value or key) of a parsed body that is not storable text; iterative, so nesting depth costs no stack. */
export function findTextProblem(value: unknown): { field: string; message: string } | null {
  const stack: { v: unknown; at: string }[] = [{ v: value, at: '' }];
  while (stack.length) {
    const { v, at } = stack.pop() as { v: unknown; at: string };
    if (typeof v === 'string') {
      const p = textProblem(v);
      if (p) return { field: at || 'body', message: p };
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], at: at ? `${at}.${i}` : String(i) });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        const field = at ? `${at}.${k}` : k;
        const p = textProblem(k);
        // eslint-disable-next-line no-control-regex -- matching control characters is the point of this pattern
        if (p) return { field: field.replace(/[\u0000\uD800-\uDFFF]/g, '?'), message: `field name ${p}` };
        stack.push({ v: child, at: field });
      }
    }
  }
  return null;
}

/**
 * A request body must be JSON (415), UTF-8 (an invalid byte is a 422, never stored as U+FFFD), well-formed, and its
 * strings storable text: no NUL, no lone surrogate (422). Hono keeps the decoded text for the route's validator.
 */
export async function readJsonBody(c: Context<AppEnv>): Promise<void> {
  const type = requestHeader(c, 'content-type') ?? '';
  if (!/^application\/([\w.-]+\+)?json\s*(;|$)/i.test(type)) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be JSON with Content-Type: application/json');
  }
  let text: string;
  try {
    text = strictUtf8.decode(await c.req.arrayBuffer());
  } catch (err) {
    if (err instanceof TypeError && (err as { code?: string }).code === 'ERR_ENCODING_INVALID_ENCODED_DATA') {
      throw ApiError.validation([{ field: 'body', message: 'not valid UTF-8' }], 'Request body is not valid UTF-8');
    }
    throw ApiError.validation([{ field: 'body', message: 'malformed JSON' }], 'Request body is not valid JSON');
  }
  // c.req.json() parses the cached text (Hono keeps promises there, whatever its type says): the route reads exactly
  // what was checked here.
  (c.req.bodyCache as unknown as Record<string, Promise<unknown>>).text = Promise.resolve(text);
  if (jsonNestingExceeds(text, MAX_JSON_DEPTH)) {
    throw ApiError.validation([{ field: 'body', message: `nested deeper than ${MAX_JSON_DEPTH} levels` }], 'Request body is nested too deeply');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw ApiError.validation([{ field: 'body', message: 'malformed JSON' }], 'Request body is not valid JSON');
  }
  const problem = findTextProblem(value);
  if (problem) throw ApiError.validation([problem], 'Request body holds text that cannot be stored');
}
