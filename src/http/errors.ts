// The error body of the API ({ error: { code, message, request_id, details } }) and the handlers that produce it.
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ZodError } from 'zod';
import { ApiError, ERROR_CODES, type ErrorCode, type FieldError } from '../errors';
import type { AppEnv } from './context';

export function errorResponse(c: Context<AppEnv>, err: ApiError): Response {
  const requestId = c.get('requestId');
  c.header('X-Request-ID', requestId);
  c.header('Cache-Control', 'no-store');
  return c.json(
    { error: { code: err.code, message: err.message, request_id: requestId, details: err.details } },
    err.status as 400,
  );
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
  c.get('app')?.log.error({ err, request_id: c.get('requestId') }, 'unhandled error');
  return new ApiError('INTERNAL_ERROR', 'Internal server error');
}
