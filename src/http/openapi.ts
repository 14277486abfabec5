// Shared OpenAPI pieces: the error body, the error responses every route lists, pagination query and envelope.
import { z } from '@hono/zod-openapi';
import type { Context, TypedResponse } from 'hono';
import { ERROR_CODES, type ErrorCode } from '../errors';

export const ErrorBodySchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'VALIDATION_ERROR' }),
      message: z.string(),
      request_id: z.string().openapi({ description: 'Equal to the X-Request-ID response header' }),
      details: z
        .object({
          errors: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
        })
        .catchall(z.unknown()),
    }),
  })
  .openapi('Error');

const requestIdHeader = {
  'X-Request-ID': { description: 'Request id, also in error.request_id', schema: { type: 'string' as const } },
};

/** Error responses for a route: the shared ones plus the route's own codes, grouped by status. */
export function errorResponses(...codes: ErrorCode[]) {
  const all: ErrorCode[] = ['UNAUTHORIZED', 'VALIDATION_ERROR', 'INTERNAL_ERROR', 'SERVICE_UNAVAILABLE', ...codes];
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(all)) {
    const s = ERROR_CODES[code].status;
    byStatus.set(s, [...(byStatus.get(s) ?? []), code]);
  }
  const out: Record<number, { description: string; headers: typeof requestIdHeader; content: { 'application/json': { schema: typeof ErrorBodySchema } } }> = {};
  for (const [status, list] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[status] = {
      description: list.map((c) => `\`${c}\`: ${ERROR_CODES[c].description}`).join('\n\n'),
      headers: requestIdHeader,
      content: { 'application/json': { schema: ErrorBodySchema } },
    };
  }
  return out;
}

export function jsonResponse<T extends z.ZodType>(schema: T, description: string) {
  return { description, headers: requestIdHeader, content: { 'application/json': { schema } } };
}

export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { 'application/json': { schema } } };
}

const intParam = (def: number, max: number, name: string) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      // An empty value (`?page=`) is a mistake the document calls a 422, not a request for the default.
      if (v === undefined) return def;
      if (!/^\d+$/.test(v)) {
        ctx.addIssue({ code: 'custom', message: `${name} must be an integer` });
        return z.NEVER;
      }
      return Number(v);
    })
    .pipe(z.number().int().min(1).max(max))
    .openapi({ type: 'integer', minimum: 1, maximum: max, default: def, param: { name, in: 'query' } });

/** An optional boolean query parameter: `true`/`false`/`1`/`0`, any case (`enabled=True` is true, not a 422). */
export function queryBoolean() {
  return z
    .string()
    .regex(/^(true|false|1|0)$/i, 'must be true, false, 1 or 0')
    .transform((v) => v === '1' || v.toLowerCase() === 'true')
    .optional()
    .openapi({ type: 'boolean' });
}

/** page/limit query parameters (spec 4.2). */
export function paginationQuery(defaultLimit = 50, maxLimit = 100) {
  return {
    page: intParam(1, Number.MAX_SAFE_INTEGER, 'page').openapi({ description: 'Page number, from 1' }),
    limit: intParam(defaultLimit, maxLimit, 'limit').openapi({ description: `Records per page, 1-${maxLimit}` }),
  };
}

export const PaginationSchema = z
  .object({
    page: z.number().int(),
    limit: z.number().int(),
    total: z.number().int(),
    total_pages: z.number().int(),
    has_next: z.boolean(),
    has_prev: z.boolean(),
  })
  .openapi('Pagination');

export function pagedSchema<T extends z.ZodType>(item: T, name: string) {
  return z.object({ items: z.array(item), pagination: PaginationSchema }).openapi(name);
}

export interface Pagination {
  page: number;
  limit: number;
  total: number;
  total_pages: number;
  has_next: boolean;
  has_prev: boolean;
}

export function pagination(page: number, limit: number, total: number): Pagination {
  const total_pages = Math.max(1, Math.ceil(total / limit));
  return { page, limit, total, total_pages, has_next: page < total_pages, has_prev: page > 1 };
}

/** The largest record id, in paths, queries and bodies: 2^53-1, the largest integer every JSON client reads exactly. */
export const MAX_ID = Number.MAX_SAFE_INTEGER;

/** Integer path id: a malformed one is a 422, as the API promises. */
export const IntIdParam = (name: string) =>
  z
    .string()
    .regex(/^[1-9]\d{0,15}$/, `${name} must be a positive integer`)
    .transform(Number)
    .refine((n) => n <= MAX_ID, `${name} must be at most 2^53-1`)
    .openapi({
      param: { name, in: 'path' },
      type: 'integer',
      minimum: 1,
      maximum: MAX_ID,
      description: 'Record id (1 to 2^53-1); an id is never reused after its record is deleted',
      example: 1,
    });

export const UuidParam = (name: string) =>
  z
    .string()
    .regex(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/, `${name} must be a UUID`)
    .transform((s) => s.toLowerCase())
    .openapi({ param: { name, in: 'path' }, type: 'string', format: 'uuid' });

/** Every POST of the API carries a JSON body; actions that need no input take an empty object. */
export const EmptyBody = z.object({}).strict().openapi('EmptyObject', { description: 'An empty object: `{}`' });

export const SuccessStatusSchema = z.object({ status: z.literal('success') }).openapi('DeleteResult');

/** JSON rendered ahead of its response (a reused page), typed by the value it encodes. */
export type JsonText<T> = string & { readonly __encodes?: T };

export function toJsonText<T>(value: T): JsonText<T> {
  return JSON.stringify(value);
}

/** A 200 response carrying rendered JSON, with the headers and the route typing c.json would give. */
export function jsonTextResponse<T>(c: Context, text: JsonText<T>): TypedResponse<T, 200, 'json'> {
  // A new header object each time, as c.json makes: @hono/node-server adds Content-Length to the one it is given.
  return c.body(text, 200, { 'Content-Type': 'application/json' }) as unknown as TypedResponse<T, 200, 'json'>;
}

/** The shared error responses, with the 403 description extended by the operation's own refusals (policy rules). */
export function errorResponsesWithRefusals(refusals: string, ...codes: ErrorCode[]) {
  const out = errorResponses('PERMISSION_DENIED', ...codes);
  const forbidden = out[403];
  if (forbidden) out[403] = { ...forbidden, description: `${forbidden.description}\n\n${refusals}` };
  return out;
}
