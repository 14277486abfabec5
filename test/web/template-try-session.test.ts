// "Try on device" of a custom template runs with its session knowledge and output cuts, which the form does not show (issue #13).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { createTemplate } from '../../src/features/templates/templates.service';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedCredential, seedDevice } from '../helpers/seed';
import { loadTranscript, startSimulator, type RunningSimulator } from '../sim/simulator';
import { WebClient } from './web-client';
import { templateWithDefaults } from '../../src/templates/files';

/** A made-up platform whose pager takes only "n": without the template's session.pagers the capture stalls. */
const transcript = loadTranscript(path.join(REPO_ROOT, 'test/sim/fixtures/custom-pager.json'));

let t: TestAppliance;
let sim: RunningSimulator;
let admin: WebClient;
let templateId = 0;
let deviceId = 0;

before(async () => {
  t = await startTestAppliance();
  sim = await startSimulator({ devices: [{ name: 'edge-7', transcript }] });
  const { db, secrets } = t.services;
  templateId = createTemplate(
    db,
    SYSTEM_ACTOR,
    templateWithDefaults({
      name: 'made-up-os',
      vendor: 'Made-up OS',
      commands: ['show config'],
      redact: false,
      exit_command: 'exit',
      session: { pagers: [{ pattern: '^\\[n\\]ext page, \\[q\\]uit\\?$', answer: 'n' }] },
      command_output: { 'show config': { drop_first: 1 } },
    }),
  ).id;
  const cred = seedCredential(db, secrets, { name: 'edge', username: 'admin', password: 'admin123' });
  deviceId = seedDevice(db, { name: 'edge-7', port: sim.port, credential_id: cred, template_id: templateId });
  admin = new WebClient(t.url);
  assert.equal((await admin.login('admin', 'admin-password-1')).status, 303);
});

after(async () => {
  await sim.close();
  await t.close();
});

test('an edited, unsaved custom template is tried with its stored session and command_output', async () => {
  const form = {
    name: 'made-up-os',
    vendor: 'Made-up OS',
    description: 'edited, not saved',
    mode: 'shell',
    prompt: '',
    pre_commands: '',
    commands: 'show config',
    strip_patterns: '',
    ignore_patterns: '',
    redact_patterns: '',
    exit_command: 'exit',
    device_id: String(deviceId),
  };
  const r = await admin.post(`/templates/${templateId}/try`, form, { csrf: true });
  assert.equal(r.res.status, 200);
  const raw = /id="trial-raw">([\s\S]*?)<\/pre>/.exec(r.html)?.[1] ?? '';
  assert.match(raw, /ntp server 10\.99\.0\.123/, 'the pager was answered: the last page arrived');
  assert.doesNotMatch(raw, /hostname edge-7/, 'the first line was cut');
});
