// `confvault notify` as an operator runs it, and a `serve` killed with SIGKILL before delivering: delivered after restart, once per delivery id.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { openAppliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { runCliAsync, spawnServe, tempDir } from '../helpers/appliance';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';
import { WebhookReceiver } from './receivers';

describe('confvault notify and delivery across a crash', () => {
  let dir: string;
  let dataDir: string;
  let hook: WebhookReceiver;
  let device: number;
  /** The webhook receiver listens on loopback, which allowed_destinations must name. */
  const allowLoopback = { CONFVAULT_NOTIFY_ALLOWED_DESTINATIONS: '127.0.0.1' };
  const cli = (args: string[], input?: string) => runCliAsync([...args, '--data-dir', dataDir], { input, env: allowLoopback });

  before(async () => {
    dir = tempDir();
    dataDir = path.join(dir, 'data');
    hook = await new WebhookReceiver().start();
    const a = openAppliance({}, loadConfig({ dataDir }, {}));
    try {
      const tpl = seedBuiltinTemplate(a.db, 'cisco-ios');
      const cred = seedCredential(a.db, a.secrets, { name: 'c', username: 'u', password: 'p' });
      device = seedDevice(a.db, { name: 'edge1', hostname: '192.0.2.1', port: 22, credential_id: cred, template_id: tpl });
    } finally {
      a.close();
    }
  });

  after(async () => {
    await hook.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('channel and rule commands: add, list (no secret shown), test, remove; usage errors exit 2', async () => {
    let r = await cli(['notify', 'channel', 'add', 'hook', '--type', 'webhook', '--url', hook.url, '--secret-stdin'], 'cli-hmac-secret\n');
    assert.equal(r.status, 0, r.stderr);
    r = await cli(['notify', 'channel', 'add', 'chat', '--type', 'slack', '--secret-stdin'], 'https://hooks.example.invalid/services/T000/B000/tokentoken\n');
    assert.equal(r.status, 0, r.stderr);
    r = await cli(['notify', 'channel', 'list']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^\d+\thook\twebhook\thttp:\/\/127\.0\.0\.1:\d+\/hook\tsecret set\t-$/m);
    assert.match(r.stdout, /\tchat\tslack\t\(URL stored encrypted\)\tsecret set/);
    assert.ok(!r.stdout.includes('cli-hmac-secret') && !r.stdout.includes('tokentoken'));
    r = await cli(['notify', 'channel', 'test', 'hook']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(hook.ok().at(-1)!.body).event, 'test');
    assert.ok(hook.ok().at(-1)!.headers['x-confvault-signature']?.startsWith('sha256='));
    r = await cli(['notify', 'channel', 'test', 'chat']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /Test message to chat failed/);
    r = await cli(['notify', 'rule', 'add', 'changes', '--events', 'config_changed,backup_failed', '--channels', 'hook', '--include-diff']);
    assert.equal(r.status, 0, r.stderr);
    r = await cli(['notify', 'rule', 'add', 'tmp', '--events', 'backup_stale', '--channels', 'chat', '--groups', '999']);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /group 999 does not exist/);
    r = await cli(['notify', 'rule', 'add', 'tmp', '--events', 'backup_stale', '--channels', 'chat']);
    assert.equal(r.status, 0, r.stderr);
    r = await cli(['notify', 'rule', 'list']);
    assert.match(r.stdout, /\tchanges\tconfig_changed,backup_failed\thook\tall\tdiff$/m);
    assert.match(r.stdout, /\ttmp\tbackup_stale\tchat\tall\tno diff$/m);
    assert.equal((await cli(['notify', 'rule', 'remove', 'tmp'])).status, 0);
    assert.equal((await cli(['notify', 'channel', 'remove', 'chat'])).status, 0);
    r = await cli(['notify', 'channel', 'list']);
    assert.ok(!r.stdout.includes('chat'));
    assert.equal((await cli(['notify', 'channel', 'remove', 'chat'])).status, 1);
    assert.equal((await cli(['notify', 'channel', 'add', 'x'])).status, 2);
    assert.equal((await cli(['notify', 'rule', 'add', 'x', '--events', 'config_changed'])).status, 2);
    assert.equal((await cli(['notify', 'bogus'])).status, 2);
    r = await cli(['notify', 'log', 'hook']);
    assert.match(r.stdout, /\tsent\t1\t1\t/);
  });

  test('kill -9 of serve before the receiver took the message: delivered after restart, once per delivery id', async () => {
    const file = path.join(dir, 'cfg.txt');
    for (const loc of ['rack1', 'rack2']) {
      writeFileSync(file, `hostname edge1\nsnmp-server location ${loc}\nend\n`);
      const r = await cli(['backup', 'import', '--device', String(device), '--file', file]);
      assert.equal(r.status, 0, r.stderr);
    }
    hook.status = 500;
    const before = hook.hits.length;
    const env = { CONFVAULT_LOG_LEVEL: 'info', ...allowLoopback };
    const first = await spawnServe(['--data-dir', dataDir, '--listen', '127.0.0.1:0'], env);
    try {
      await hook.waitFor(() => hook.hits.length > before);
    } finally {
      first.child.kill('SIGKILL');
      await new Promise((r) => first.child.once('exit', r));
    }
    const failed = hook.hits.slice(before);
    assert.ok(failed.every((h) => h.status === 500));
    const id = failed[0].headers['x-confvault-delivery'];
    assert.equal(JSON.parse(failed[0].body).event, 'config_changed');
    hook.status = 200;
    const second = await spawnServe(['--data-dir', dataDir, '--listen', '127.0.0.1:0'], env);
    try {
      await hook.waitFor(() => hook.ok().some((h) => h.headers['x-confvault-delivery'] === id), 30_000);
      // Give a duplicate the chance to show up.
      await new Promise((r) => setTimeout(r, 2500));
    } finally {
      await second.stop();
    }
    const delivered = hook.ok().filter((h) => h.headers['x-confvault-delivery'] === id);
    assert.equal(delivered.length, 1, 'accepted once');
    const body = JSON.parse(delivered[0].body);
    assert.equal(body.delivery_id, id);
    assert.match(body.diff, /-snmp-server location rack1\n\+snmp-server location rack2/);
    const r = await cli(['notify', 'log', 'hook']);
    assert.match(r.stdout, new RegExp(`^${id}\\t\\d+\\tsent\\t\\d+\\t1\\t`, 'm'));
  });
});
