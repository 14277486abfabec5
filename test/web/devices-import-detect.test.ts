// The web import with template "auto" (issue #25): rows are detected at preview (platform, credential and why shown;
// a row nothing was found for is an error with the reason); apply uses what the preview found, without detecting again.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import path from 'node:path';
import { detectImportRows, IMPORT_DETECT_CONCURRENCY } from '../../src/engine/device-detect';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential } from '../helpers/seed';
import { loadTranscript, startSimulator, type RunningSimulator } from '../sim/simulator';
import { WebClient } from './web-client';

const frr = loadTranscript(path.join(REPO_ROOT, 'test/sim/transcripts/frr.json'));

let t: TestAppliance;
let sim: RunningSimulator | undefined;
let admin: WebClient;
let credentialId = 0;
const db = () => t.services.db;

async function post(path: string, fields: Record<string, string>) {
  const form = new FormData();
  form.set('_csrf', await admin.csrf());
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  const res = await admin.fetch(path, { method: 'POST', body: form });
  return { res, html: await res.text() };
}

const unescape = (s: string) =>
  s
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');

before(async () => {
  t = await startTestAppliance();
  sim = await startSimulator({ devices: [{ name: 'r1', transcript: frr, password: 'import-detect-pw' }] });
  seedBuiltinTemplate(db(), 'frr');
  credentialId = seedCredential(db(), t.appliance.secrets, { name: 'frr-login', username: 'r1', password: 'import-detect-pw' });
  admin = new WebClient(t.url);
  assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
});
after(async () => {
  await sim?.close();
  await t?.close();
});

test('template auto: the preview shows frr for the row that answers and the reason for the one that refuses; apply creates the first as frr', async () => {
  const text = [
    'name,hostname,port,protocol,credential,template',
    `auto-frr,127.0.0.1,${sim!.port},ssh,auto,auto`,
    'auto-gone,127.0.0.1,1,ssh,frr-login,auto',
  ].join('\n');
  const preview = await post('/devices/import/preview', { format: 'csv', text });
  assert.equal(preview.res.status, 200, preview.html);
  assert.match(preview.html, /2 row\(s\): 1 valid, 1 with errors/);
  const detected = /<table class="list" id="import-detected">[\s\S]*?<\/table>/.exec(preview.html)?.[0] ?? '';
  assert.match(detected, /<td>2<\/td><td>auto-frr<\/td><td class="mono">frr<\/td><td>frr-login<\/td><td>frr: [^<]*FRRouting/);
  assert.doesNotMatch(detected, /auto-gone/);
  assert.match(preview.html, /<tr><td>3<\/td><td>auto-gone<\/td><td class="mono">row<\/td><td>detection: could not tell: [^<]+<\/td><\/tr>/);
  const hidden = /name="detected" value="([^"]*)"/.exec(preview.html)?.[1];
  assert.ok(hidden, 'the apply form carries the detections');
  assert.equal(db().prepare('SELECT count(*) FROM devices').pluck().get(), 0);

  // Apply does not detect again: with the device gone, the preview's pick is still what is written.
  await sim!.close();
  sim = undefined;
  const applied = await post('/devices/import', { format: 'csv', text, credential: '', detected: unescape(hidden), mode: 'valid' });
  assert.equal(applied.res.status, 303, applied.html);
  const row = db()
    .prepare("SELECT t.name AS template, d.credential_id FROM devices d JOIN templates t ON t.id = d.template_id WHERE d.name = 'auto-frr'")
    .get();
  assert.deepEqual({ ...(row as object) }, { template: 'frr', credential_id: credentialId });
  assert.equal(db().prepare("SELECT count(*) FROM devices WHERE name = 'auto-gone'").pluck().get(), 0);

  // Without the preview's detections an "auto" row is refused, never detected at apply.
  const bare = await post('/devices/import', { format: 'csv', text: text.replace(/auto-frr/g, 'auto-frr2'), mode: 'all' });
  assert.equal(bare.res.status, 422);
  assert.equal(db().prepare("SELECT count(*) FROM devices WHERE name = 'auto-frr2'").pluck().get(), 0);
});

test('an import detects several rows at a time, never more than IMPORT_DETECT_CONCURRENCY', async () => {
  const rows = IMPORT_DETECT_CONCURRENCY + 2;
  // Each connection is held until as many are open as the bound allows (or the last row has come), then all are dropped:
  // one row at a time would wait on the first until it timed out; more than the bound would be counted.
  let held: Socket[] = [];
  let accepted = 0;
  let peak = 0;
  const server = createServer((s) => {
    accepted++;
    held.push(s);
    peak = Math.max(peak, held.length);
    if (held.length === IMPORT_DETECT_CONCURRENCY || accepted === rows) {
      setTimeout(() => {
        for (const h of held) h.destroy();
        held = [];
      }, 50);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const port = (server.address() as { port: number }).port;
    const lines = Array.from({ length: rows }, (_, i) => `bound-${i},127.0.0.1,${port},ssh,frr-login,auto`);
    const text = ['name,hostname,port,protocol,credential,template', ...lines].join('\n');
    const deps = { db: db(), secrets: t.appliance.secrets, config: t.services.config };
    const found = await detectImportRows(deps, SYSTEM_ACTOR, { format: 'csv', text });
    assert.deepEqual(
      [...found.keys()],
      Array.from({ length: rows }, (_, i) => i + 2),
      "one result a row, in the file's order",
    );
    // Every row ended when the server dropped it, none by waiting for a time-out (as one row at a time would).
    for (const d of found.values()) assert.match('error' in d ? d.error : '', /Connection lost before handshake/);
    assert.equal(accepted, rows);
    assert.equal(peak, IMPORT_DETECT_CONCURRENCY);
  } finally {
    server.close();
  }
});
