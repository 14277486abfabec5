// The import-direction check (.dependency-cruiser.cjs): it reports each wrong-way import the layer diagram forbids, and src/ passes it.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import { REPO_ROOT } from '../helpers/appliance';

const config = createRequire(import.meta.url)(path.join(REPO_ROOT, '.dependency-cruiser.cjs')) as IConfiguration;

async function violations(baseDir: string): Promise<string[]> {
  const { output } = await cruise(
    ['src'],
    { ...config.options, baseDir, validate: true, ruleSet: { forbidden: config.forbidden }, outputType: 'json' },
    { extensions: ['.ts', '.tsx', '.js', '.json'] },
  );
  const result = (typeof output === 'string' ? JSON.parse(output) : output) as ICruiseResult;
  return (result.summary.violations ?? []).map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`);
}

test('the layer check reports every wrong-way import of the fixture tree, and not a right-way one', async () => {
  const found = await violations(path.join(REPO_ROOT, 'test/fixtures/layers'));
  const expected = [
    'features-not-to-upper-layers: src/features/templates/templates.service.ts -> src/engine/templates/index.ts',
    'features-not-to-upper-layers: src/features/backups/import.service.ts -> src/engine/normalise.ts',
    'http-is-plumbing: src/http/api-v1.routes.ts -> src/features/devices/devices.routes.ts',
    'http-is-plumbing: src/http/middleware.ts -> src/features/apikeys/apikeys.service.ts',
    'http-is-plumbing: src/http/context.ts -> src/engine/runner.ts',
    'http-is-plumbing: src/http/app.ts -> src/web/web.tsx',
    'engine-through-services: src/engine/jobs.ts -> src/features/devices/devices.store.ts',
    'engine-types-only-from-db: src/engine/scheduler.ts -> src/db/open.ts',
    'collector-site-side: src/collector/run.ts -> src/features/backups/backups.store.ts',
    'only-cli-imports-collector: src/web/collectors.ts -> src/collector/run.ts',
    'events-through-services: src/events/event-backups.ts -> src/features/devices/devices.store.ts',
    'events-types-only-from-db: src/events/receiver.ts -> src/db/open.ts',
    'only-cli-imports-events: src/web/events-status.ts -> src/events/start.ts',
    'cli-through-services: src/cli/serve.ts -> src/features/backups/backups.store.ts',
    'only-cli-imports-app: src/web/backup-jobs.ts -> src/app/services.ts',
    'templates-import-nothing: src/templates/index.ts -> src/features/templates/templates.store.ts',
    'web-and-app-through-services: src/web/pages/devices.tsx -> src/features/devices/devices.store.ts',
  ];
  for (const v of expected) assert.ok(found.includes(v), `not reported: ${v}\nreported:\n${found.join('\n')}`);
  assert.ok(
    found.some((v) => v.startsWith('no-circular: src/lib/a.ts')),
    `the a ↔ b cycle is not reported:\n${found.join('\n')}`,
  );
  // The right-way edge (a service importing its store) is not reported.
  assert.ok(!found.some((v) => v.includes('src/features/devices/devices.service.ts')), found.join('\n'));
});

test('src/ follows the layer diagram', async () => {
  assert.deepEqual(await violations(REPO_ROOT), []);
});
