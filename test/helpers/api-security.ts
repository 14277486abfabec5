// The permission matrix shared by the *.security.test.ts files: each endpoint × a key with and without its permission.
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PERMISSIONS, type Permission } from '../../src/identity/permissions';
import { apiCall, type ApiResult } from './api';
import type { TestAppliance } from './appliance';

export type { Json } from './api';

/** A call to /api/v1; every error body must carry the response's X-Request-ID. */
export function callApi(t: TestAppliance, key: string | undefined, method: string, path: string, json?: unknown): Promise<ApiResult> {
  return apiCall(t, path, { method, key, json });
}

export interface GuardedEndpoint {
  label: string;
  permission: Permission;
  method: string;
  /** Builds a fresh target, so that a successful call (a delete) does not disturb the next. */
  request(): { path: string; json?: unknown };
  ok: number;
}

/**
 * Registers, per endpoint: allowed with only its permission; 403 PERMISSION_DENIED with every other permission,
 * also for a malformed body or id (the guard runs before validation); 401 UNAUTHORIZED without a key, with an
 * unknown key, and with a valid key in the URL (which is then revoked). `collection` is the resource's list path ("/devices").
 */
export function permissionMatrix(title: string, app: () => TestAppliance, collection: string, endpoints: GuardedEndpoint[]): void {
  describe(title, () => {
    // Per permission: a key holding only it and one holding every other (argon2 makes users slow to create).
    const keys = new Map<Permission, { only: string; allBut: string }>();
    before(async () => {
      for (const p of new Set(endpoints.map((e) => e.permission))) {
        keys.set(p, { only: await app().keyFor({ permissions: [p] }), allBut: await app().keyFor({ permissions: PERMISSIONS.filter((q) => q !== p) }) });
      }
    });

    for (const e of endpoints) {
      test(`${e.label}: allowed with ${e.permission}, 403 with every other permission, even for a malformed request`, async () => {
        const { only, allBut } = keys.get(e.permission)!;
        const { path, json } = e.request();
        const denied = await callApi(app(), allBut, e.method, path, json);
        assert.equal(denied.status, 403, JSON.stringify(denied.body));
        assert.equal(denied.body.error?.code, 'PERMISSION_DENIED');
        assert.match(denied.body.error.message, new RegExp(e.permission.replace('.', '\\.')), 'the message names the permission');
        if (e.method !== 'GET') {
          const malformed = await callApi(app(), allBut, e.method, e.method === 'POST' ? collection : `${collection}/not-an-id`, { bogus: true });
          assert.equal(malformed.status, 403, 'the guard runs before validation');
        }
        const allowed = await callApi(app(), only, e.method, path, json);
        assert.equal(allowed.status, e.ok, JSON.stringify(allowed.body));
      });

      test(`${e.label}: 401 without a key, with a malformed or unknown key, or with the key in the URL`, async () => {
        const { path, json } = e.request();
        for (const key of [undefined, 'cv_not-a-real-key', `cv_${'x'.repeat(43)}`]) {
          const r = await callApi(app(), key, e.method, path, json);
          assert.equal(r.status, 401);
          assert.equal(r.body.error?.code, 'UNAUTHORIZED');
        }
        // A key seen in a URL is revoked as exposed: a key of its own, so the others stay usable.
        const key = await app().keyFor({ permissions: [e.permission] });
        const inUrl = await callApi(app(), undefined, e.method, `${path}${path.includes('?') ? '&' : '?'}api_key=${key}`, json);
        assert.equal(inUrl.status, 401);
        assert.equal((await callApi(app(), key, e.method, path, json)).status, 401, 'the exposed key is revoked');
      });
    }
  });
}
