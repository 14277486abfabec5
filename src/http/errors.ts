// The error body of the API ({ error: { code, message, request_id, details } }) and the handlers that produce it.
import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ZodError } from 'zod';
import { ApiError, ERROR_CODES, type ErrorCode, type FieldError } from '../errors';
import type { AppEnv } from './context';

export function errorResponse(c: Context<AppEnv>, err: ApiError): Response {
  const requestId = c.get('requestId');
  c.header('X-Request-ID', requestId);
  c.header('Cache-Control', 'no-store');
  // A 405 names what the path does accept (RFC 9110 15.5.6).
  if (err.code === 'METHOD_NOT_ALLOWED' && Array.isArray(err.details.allow)) c.header('Allow', err.details.allow.join(', '));
  return c.json({ error: { code: err.code, message: err.message, request_id: requestId, details: err.details } }, err.status as 400);
}

export function zodFieldErrors(error: ZodError, target?: string): FieldError[] {
  return error.issues.map((i) => {
    let field = i.path.map(String).join('.');
    if (i.code === 'unrecognized_keys') field = [...i.path.map(String), i.keys.join(',')].filter(Boolean).join('.');
    if (!field) field = target === 'json' ? 'body' : (target ?? 'request');
    const message = i.code === 'unrecognized_keys' ? `unknown field${i.keys.length > 1 ? 's' : ''}: ${i.keys.join(', ')}` : i.message;
    return { field, message };
  });
}

const httpStatusCodes: Record<number, ErrorCode> = {
  400: 'VALIDATION_ERROR',
  401: 'UNAUTHORIZED',
  403: 'PERMISSION_DENIED',
  404: 'ROUTE_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
};

/** Turn anything thrown into an ApiError; unexpected errors become a bare 500 and are logged with their cause. */
export function toApiError(c: Context<AppEnv>, err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (err.status === 400 && /JSON/i.test(err.message)) {
      return ApiError.validation([{ field: 'body', message: 'malformed JSON' }], 'Request body is not valid JSON');
    }
    const code = httpStatusCodes[err.status];
    if (code) return new ApiError(code, err.message || ERROR_CODES[code].description);
  }
  if (requestBroken(c)) {
    // The client's own connection or framing failed (a malformed chunk, a reset): Node has answered it already.
    c.get('app')?.log.info({ request_id: c.get('requestId'), cause: (err as Error)?.message }, 'request body broken off by the client');
    return new ApiError('BAD_REQUEST', 'Malformed HTTP request');
  }
  if (isDatabaseBusy(err)) {
    c.get('app')?.log.warn({ request_id: c.get('requestId') }, 'database busy: request refused after the busy timeout');
    return new ApiError('SERVICE_UNAVAILABLE', 'The database is busy (another process holds it); try again shortly');
  }
  c.get('app')?.log.error({ err, request_id: c.get('requestId') }, 'unhandled error');
  return new ApiError('INTERNAL_ERROR', 'Internal server error');
}

/** Whether the request's body stream failed on the client's side (aborted, reset, malformed framing). */
function requestBroken(c: Context<AppEnv>): boolean {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  return incoming !== undefined && (incoming.errored != null || (incoming.destroyed && !incoming.complete));
}

/** better-sqlite3's failure when another connection held the database past the busy timeout. */
export function isDatabaseBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_') || code === 'SQLITE_LOCKED');
}
