// The /api/v1 gate's API-key authentication: the X-API-Key header only, and a key sent in a URL refused and revoked.
import type { Context } from 'hono';
import { ApiError } from '../errors';
import { authenticateApiKey, exposeKeyInUrl, hasKeyShape } from '../features/apikeys/apikeys.service';
import type { AppEnv } from '../http/context';
import { requestHeader } from '../http/middleware';

/**
 * /api/v1 authenticates only by the X-API-Key header. A request whose query string carries a key on record (valid,
 * expired or revoked) is refused; a valid one is revoked and marked exposed, since it now sits in proxy and browser
 * logs. Only values with a key's exact shape are looked up, so `?q=cv_lab1` or `?token=x` are served as usual.
 * The value is never logged.
 */
export function refuseKeyInQuery(c: Context<AppEnv>): void {
  const url = c.req.url;
  const query = url.indexOf('?');
  // Most requests: no query, or none that could hold a key (a percent-encoded one is decoded below).
  if (query === -1 || (!url.includes('cv_', query) && !url.includes('%', query))) return;
  for (const [, value] of new URLSearchParams(url.slice(query + 1))) {
    if (hasKeyShape(value) && exposeKeyInUrl(c.get('app').db, value, c.get('requestId') ?? null)) {
      throw new ApiError('UNAUTHORIZED', 'API keys are accepted only in the X-API-Key header, never in the URL; a valid key sent in a URL is revoked');
    }
  }
}

/** The X-API-Key header's principal, set on the context; a missing or refused key is a 401. */
export function authenticate(c: Context<AppEnv>): void {
  const key = requestHeader(c, 'x-api-key');
  if (!key) throw new ApiError('UNAUTHORIZED', 'Missing X-API-Key header');
  const principal = authenticateApiKey(c.get('app').db, key.trim());
  if (!principal) throw new ApiError('UNAUTHORIZED', 'Invalid, expired or revoked API key');
  c.set('principal', principal);
}
