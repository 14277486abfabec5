// The router's memo of match results is bounded: only paths that reach a route, only short ones, at most MAX_REMEMBERED.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Hono } from 'hono';
import { MAX_PATH_LENGTH, MAX_REMEMBERED, RememberingRouter } from '../../src/http/router';

function app() {
  const router = new RememberingRouter<unknown>();
  const h = new Hono({ router: router as never });
  h.use('*', (_c, next) => next());
  h.get('/devices/unreachable', (c) => c.text('list'));
  h.get('/devices/:id', (c) => c.text(`device ${c.req.param('id')}`));
  return { h, router };
}

test('a scan of paths no route answers (anonymous 404s) leaves nothing in the memo', async () => {
  const { h, router } = app();
  for (let i = 0; i < 5000; i++) assert.equal((await h.request(`/scan/${i}/${'x'.repeat(i % 50)}`)).status, 404);
  assert.equal(router.size, 0);
});

test('long paths are matched every time and never kept; answers stay right', async () => {
  const { h, router } = app();
  const long = `/devices/${'9'.repeat(MAX_PATH_LENGTH)}`;
  assert.equal(await (await h.request(long)).text(), `device ${'9'.repeat(MAX_PATH_LENGTH)}`);
  assert.equal(router.size, 0);
  assert.equal(await (await h.request('/devices/unreachable')).text(), 'list');
  assert.equal(await (await h.request('/devices/7')).text(), 'device 7');
  assert.equal(await (await h.request('/devices/7')).text(), 'device 7');
  assert.equal(router.size, 2);
});

test('paths that do reach a route are kept up to MAX_REMEMBERED, never more', async () => {
  const { h, router } = app();
  for (let i = 0; i < MAX_REMEMBERED + 500; i++) {
    await h.request(`/devices/${i}`);
    assert.ok(router.size <= MAX_REMEMBERED);
  }
  assert.equal(await (await h.request('/devices/123')).text(), 'device 123');
});
