// Request-wide middleware: request id, access log, API-key authentication, permission guard, request time zone.
import { randomUUID } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { isValidTimeZone } from '../config/config';
import { ApiError } from '../errors';
import { authenticateApiKey } from '../features/apikeys/apikeys.service';
import type { Permission } from '../identity/permissions';
import type { AppEnv, AppServices } from './context';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echo a well-formed incoming X-Request-ID, otherwise make one; set it on every response. */
export function requestId(app: AppServices): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const incoming = c.req.header('X-Request-ID');
    const id = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    c.set('requestId', id);
    c.set('app', app);
    // Set before the handler, so every response made through the context (c.json, c.body, c.html, the error
    // handlers) carries it, a HEAD answer too (a copy of the GET response made from those headers). Not touched
    // afterwards: reading c.res.headers turns the adapter's plain header object into a Headers instance, a cost on
    // every request. No route answers with a Response built outside its context.
    c.header('X-Request-ID', id);
    return next();
  };
}

/** One JSON log line per request: never the query string (it may carry a mistaken key) nor any body. */
export function accessLog(app: AppServices): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const start = performance.now();
    await next();
    app.log.info(
      {
        request_id: c.get('requestId'),
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        duration_ms: Math.round((performance.now() - start) * 100) / 100,
        user: c.get('principal')?.username,
      },
      'request',
    );
  };
}

const KEYLIKE_PARAM = /^(x[-_]?)?api[-_]?key$|^key$|^token$|^access[-_]?token$/i;

/**
 * /api/v1 authenticates only by the X-API-Key header. Cookies are never consulted; a key in the query
 * string is refused outright so that integrations learn not to leak keys into URLs and logs.
 */
export function refuseKeyInQuery(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const url = c.req.url;
    const query = url.indexOf('?');
    if (query === -1) return next(); // most requests: no URL to parse
    for (const [name, value] of new URLSearchParams(url.slice(query + 1))) {
      if (KEYLIKE_PARAM.test(name) || value.startsWith('cv_')) {
        throw new ApiError('UNAUTHORIZED', 'API keys are accepted only in the X-API-Key header, never in the URL');
      }
    }
    await next();
  };
}

export function apiKeyAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const key = c.req.header('X-API-Key');
    if (!key) throw new ApiError('UNAUTHORIZED', 'Missing X-API-Key header');
    const principal = authenticateApiKey(c.get('app').db, key.trim());
    if (!principal) throw new ApiError('UNAUTHORIZED', 'Invalid, expired or revoked API key');
    c.set('principal', principal);
    await next();
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
export function requestTimezone(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header('X-Timezone')?.trim();
    if (header) {
      if (!isKnownTimeZone(header)) {
        throw ApiError.validation([{ field: 'X-Timezone', message: `unknown IANA time zone "${header.slice(0, 64)}"` }], 'Unknown time zone');
      }
      c.set('timezone', header);
    } else {
      c.set('timezone', c.get('principal')?.timezone || c.get('app').config.server.timezone);
    }
    await next();
  };
}

/** Route guard: the principal must hold the permission. Declared where each route is registered. */
export function requirePermission(permission: Permission): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (!c.get('principal')?.permissions.has(permission)) {
      throw new ApiError('PERMISSION_DENIED', `This operation needs the permission ${permission}`, { permission });
    }
    await next();
  };
}

/**
 * Bodies of state-changing requests must be well-formed JSON, checked here for every path so that a
 * malformed body is a 422 whatever the route. Hono caches the parsed body for the route's validator.
 */
export function requireJsonBody(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method === 'POST' || c.req.method === 'PUT' || c.req.method === 'PATCH') {
      const type = c.req.header('Content-Type') ?? '';
      if (!/^application\/([\w.-]+\+)?json\s*(;|$)/i.test(type)) {
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Request bodies must be JSON with Content-Type: application/json');
      }
      try {
        await c.req.json();
      } catch {
        throw ApiError.validation([{ field: 'body', message: 'malformed JSON' }], 'Request body is not valid JSON');
      }
    }
    await next();
  };
}
