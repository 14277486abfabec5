// The API tests' shared helpers: one call to /api/v1 (an error body carries the response's X-Request-ID) and the spec's error-shape check.
import assert from 'node:assert/strict';
import type { TestAppliance } from './appliance';

/** The spec's error body: `{ error: { code, message, request_id, details } }`. */
export interface ErrorBody {
  code: string;
  message: string;
  request_id: string;
  details: { errors?: { field: string; message: string }[]; [key: string]: unknown };
}

/** A JSON response body, inspected field by field. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies of every shape are read by the tests
export type Json = Record<string, any> & { error?: ErrorBody };

export interface ApiResult {
  status: number;
  body: Json;
  /** The body as sent, for tests that look for a secret in it. */
  text: string;
  headers: Headers;
}

export interface CallInit {
  method?: string;
  json?: unknown;
  /** A raw body (a malformed JSON text), instead of `json`. */
  body?: string;
  headers?: Record<string, string>;
  key?: string;
}

/** Calls /api/v1`path`; asserts that an error body's request_id equals the X-Request-ID header. */
export async function apiCall(t: TestAppliance, path: string, init: CallInit = {}): Promise<ApiResult> {
  const res = await t.api(`/api/v1${path}`, { method: init.method, json: init.json, body: init.body, headers: init.headers, key: init.key });
  const text = await res.text();
  const body = JSON.parse(text) as Json;
  if (res.status >= 400)
    assert.equal(body.error?.request_id, res.headers.get('x-request-id'), `error.request_id equals X-Request-ID on ${init.method ?? 'GET'} ${path}`);
  return { status: res.status, body, text, headers: res.headers };
}

/**
 * Asserts the status, the spec's error shape and code, and (when given) the fields named in details.errors.
 * Returns the error body.
 */
export function expectError(r: { status: number; body: Json }, status: number, code: string, fields?: string[]): ErrorBody {
  assert.equal(r.status, status, JSON.stringify(r.body));
  const error = r.body.error;
  assert.ok(error, `an error body: ${JSON.stringify(r.body)}`);
  assert.equal(error.code, code);
  assert.equal(typeof error.message, 'string');
  assert.equal(typeof error.details, 'object');
  if (fields) assert.deepEqual([...new Set(error.details.errors?.map((e) => e.field))].sort(), [...new Set(fields)].sort(), JSON.stringify(r.body));
  return error;
}

/**
 * Reads a fetch Response and asserts the spec's error body: the status, JSON, `{ error }` and nothing else, the code,
 * a message, request_id equal to the X-Request-ID header, details, and no stack trace or HTML. Returns the body.
 */
export async function expectErrorResponse(res: Response, status: number, code: string): Promise<Json & { error: ErrorBody }> {
  const text = await res.text();
  assert.equal(res.status, status, text);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json\b/);
  const requestId = res.headers.get('x-request-id');
  assert.ok(requestId, 'an X-Request-ID header');
  const body = JSON.parse(text) as Json & { error: ErrorBody };
  assert.deepEqual(Object.keys(body), ['error']);
  assert.equal(body.error.code, code);
  assert.equal(typeof body.error.message, 'string');
  assert.ok(body.error.message.length > 0, 'a message');
  assert.equal(body.error.request_id, requestId);
  assert.equal(typeof body.error.details, 'object');
  assert.doesNotMatch(text, /<html|<!DOCTYPE|\bat \S+ \(|\.ts:\d+|node_modules|Error: /i);
  return body;
}
