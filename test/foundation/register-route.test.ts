// registerRoute refuses a definition whose request headers, cookies or non-JSON body it would not validate, and still serves the rest.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { AppEnv } from '../../src/http/context';
import { registerRoute } from '../../src/http/route';

const ok = { 200: { description: 'ok', content: { 'application/json': { schema: z.object({ n: z.number() }) } } } };

test('a route describing request headers is refused at registration, naming the route and the part', () => {
  const route = createRoute({ method: 'get', path: '/things', request: { headers: z.object({ 'x-tenant': z.string().min(3) }) }, responses: ok });
  assert.throws(
    () => registerRoute(new OpenAPIHono<AppEnv>(), route, (c) => c.json({ n: 1 }, 200)),
    /GET \/things: .*request headers, which would go unchecked/,
  );
});

test('a route describing request cookies is refused at registration', () => {
  const route = createRoute({ method: 'get', path: '/things', request: { cookies: z.object({ sid: z.string() }) }, responses: ok });
  assert.throws(() => registerRoute(new OpenAPIHono<AppEnv>(), route, (c) => c.json({ n: 1 }, 200)), /request cookies, which would go unchecked/);
});

test('a route describing a form body is refused at registration', () => {
  const route = createRoute({
    method: 'post',
    path: '/things',
    request: { body: { content: { 'application/x-www-form-urlencoded': { schema: z.object({ a: z.string() }) } } } },
    responses: ok,
  });
  assert.throws(() => registerRoute(new OpenAPIHono<AppEnv>(), route, (c) => c.json({ n: 1 }, 200)), /POST \/things: .*application\/x-www-form-urlencoded/);
});

test('query, path parameters and a JSON body are accepted and validated', async () => {
  const api = new OpenAPIHono<AppEnv>();
  api.onError((err, c) => c.json({ error: err.message }, 422));
  const route = createRoute({
    method: 'get',
    path: '/things/{id}',
    request: { params: z.object({ id: z.coerce.number().int() }), query: z.object({ n: z.coerce.number().default(2) }) },
    responses: ok,
  });
  registerRoute(api, route, (c) => c.json({ n: c.req.valid('param').id * c.req.valid('query').n }, 200));
  const res = await api.request('/things/21');
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), { n: 42 });
  assert.equal((await api.request('/things/abc')).status, 422);
});
