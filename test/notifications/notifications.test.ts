// Notifications end to end in-process: backups imported through the service reach a real webhook and SMTP server; digest, retries, dead, group scope, stale.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { parsePatch } from 'diff';
import { createServer, type AddressInfo } from 'node:net';
import { finishBackup, startBackup } from '../../src/features/backups/backup-record.service';
import { importBackup } from '../../src/features/backups/import.service';
import { recordReachability } from '../../src/features/notifications/notification-events.service';
import { createChannel, createRule, listChannels } from '../../src/features/notifications/notifications.service';
import { NotificationWorker, backoffMs, checkStaleDevices, sendTestMessage, type WorkerDeps } from '../../src/features/notifications/notifications.worker';
import { pruneDeliveries } from '../../src/features/notifications/notifications.store';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { DestinationPolicy } from '../../src/lib/destinations';
import { runNotificationDiffs } from '../../src/features/configs/workers/notification-diffs';
import { REPO_ROOT, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { rawState, seedBuiltinTemplate, seedCredential, seedDevice, seedGroup } from '../helpers/seed';
import { SmtpReceiver, WebhookReceiver } from './receivers';

/** The receivers of these tests listen on loopback, which allowed_destinations must name. */
const LOOPBACK = ['127.0.0.1'];
const policy = new DestinationPolicy(LOOPBACK);
const HMAC_KEY = 'hmac-key-never-in-a-payload';
const SECRET = 'S3cr3tEnable99';

const ajv = new Ajv2020({ strict: false });
addFormats(ajv);
/** Validator of docs/webhook-payload.schema.json: what receivers are told they will get. */
const validPayload = ajv.compile(JSON.parse(readFileSync(path.join(REPO_ROOT, 'docs/webhook-payload.schema.json'), 'utf8')));
function assertDocumented(body: unknown) {
  assert.ok(validPayload(body), JSON.stringify(validPayload.errors));
}

function config(text: string) {
  return `hostname edge\nenable secret 9 ${SECRET}\nusername ops privilege 15 secret 9 ${SECRET}x\n${text}\nend\n`;
}

describe('notifications', () => {
  let t: TestAppliance;
  let hook: WebhookReceiver;
  let smtp: SmtpReceiver;
  let deps: WorkerDeps;
  let worker: NotificationWorker;
  let tpl: number;
  let cred: number;
  let seq = 0;

  const db = () => t.appliance.db;
  const newDevice = (group: number | null = null) =>
    seedDevice(db(), { name: `dev${++seq}`, hostname: `10.0.0.${seq}`, port: 22, credential_id: cred, template_id: tpl, group_id: group });
  const imp = (device: number, text: string) => importBackup(db(), SYSTEM_ACTOR, t.appliance.snapshots, device, config(text));
  /** Run worker passes (with a clock moved forward) until the sends in flight finished. */
  async function pass(now = Date.now()) {
    worker.tick(now);
    await worker.settled();
    await new Promise((r) => setTimeout(r, 300));
  }
  const outboxCount = (channel: string) =>
    db()
      .prepare('SELECT count(*) FROM notification_outbox o JOIN notification_channels c ON c.id = o.channel_id WHERE c.name = ?')
      .pluck()
      .get(channel) as number;

  before(async () => {
    t = await startTestAppliance();
    hook = await new WebhookReceiver().start();
    smtp = await new SmtpReceiver().start();
    deps = {
      db: t.appliance.db,
      secrets: t.appliance.secrets,
      snapshots: t.appliance.snapshots,
      config: { ...t.services.config, notifications: { min_interval_seconds: 60, max_attempts: 3, allowed_destinations: LOOPBACK } },
      diffs: runNotificationDiffs,
    };
    worker = new NotificationWorker(deps);
    tpl = seedBuiltinTemplate(db(), 'cisco-ios');
    cred = seedCredential(db(), t.appliance.secrets, { name: 'c', username: 'u', password: 'p' });
    await createChannel(db(), SYSTEM_ACTOR, t.appliance.secrets, policy, { name: 'hook', type: 'webhook', url: hook.url, secret: HMAC_KEY });
    await createChannel(db(), SYSTEM_ACTOR, t.appliance.secrets, policy, {
      name: 'mail',
      type: 'email',
      smtp_host: '127.0.0.1',
      smtp_port: smtp.port,
      smtp_tls: 'none',
      smtp_user: 'mailer',
      secret: 'smtp-pass-1',
      from: 'confvault@example.net',
      to: ['noc@example.net', 'ops@example.net'],
    });
    createRule(db(), SYSTEM_ACTOR, { name: 'changes', events: ['config_changed', 'backup_failed'], channels: ['hook', 'mail'], include_diff: true });
  });

  after(async () => {
    await worker.stop();
    await hook.stop();
    await smtp.stop();
    await t.close();
  });

  test('a config change reaches the webhook (signed, with the redacted diff) and the mailbox; no secret in any payload', async () => {
    const dev = newDevice();
    imp(dev, 'snmp-server location rack1');
    const first = imp(dev, 'snmp-server location rack2');
    assert.equal(first.changed, true);
    await pass();
    await hook.waitFor(() => hook.ok().length === 1);
    await hook.waitFor(() => smtp.mails.length === 1);
    const hit = hook.ok()[0];
    const body = JSON.parse(hit.body);
    assert.equal(body.event, 'config_changed');
    assertDocumented(body);
    assert.equal(body.delivery_id, hit.headers['x-confvault-delivery']);
    assert.match(body.occurred_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.deepEqual(body.device, { id: dev, name: `dev${seq}`, hostname: `10.0.0.${seq}`, group_path: null });
    assert.deepEqual(body.backup, { id: first.id, trigger: 'import', changed_by: null, success: true, failure_type: null });
    assert.match(body.diff, /-snmp-server location rack1\n\+snmp-server location rack2/);
    // A valid unified diff (patch(1) and git apply take it): its --- and +++ lines, then the hunk.
    const [file, ...others] = parsePatch(body.diff);
    assert.equal(others.length, 0);
    assert.equal(file.oldFileName, `dev${seq} (before)`);
    assert.equal(file.newFileName, `dev${seq} (after)`);
    assert.ok(file.hunks.some((h) => h.lines.includes('-snmp-server location rack1') && h.lines.includes('+snmp-server location rack2')));
    assert.match(body.diff, /^--- dev\d+ \(before\)\n\+\+\+ dev\d+ \(after\)\n@@ /);
    // The HMAC verifies as docs/events.md tells receivers to verify it.
    const ts = hit.headers['x-confvault-timestamp'];
    assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 60);
    const expected = 'sha256=' + createHmac('sha256', HMAC_KEY).update(`${ts}.${hit.body}`).digest('hex');
    assert.equal(hit.headers['x-confvault-signature'], expected);
    // The mail: Message-ID from the delivery id, the diff in the text, SMTP auth with the stored password.
    const mail = smtp.mails[0];
    assert.deepEqual(mail.to, ['noc@example.net', 'ops@example.net']);
    assert.match(mail.data, /Message-ID: <[0-9a-f-]{36}@confvault>/i);
    assert.match(mail.data, /\+snmp-server location rack2/);
    assert.deepEqual(smtp.auth.at(-1), { user: 'mailer', pass: 'smtp-pass-1' });
    for (const text of [hit.body, mail.data, JSON.stringify(hit.headers)]) {
      assert.ok(!text.includes(SECRET), 'device secret absent');
      assert.ok(!text.includes(HMAC_KEY), 'channel secret absent');
      assert.ok(!text.includes('smtp-pass-1'), 'SMTP password absent');
    }
    // Secrets at rest: the channel row holds no plaintext.
    const raw = JSON.stringify(db().prepare('SELECT settings, hex(secret_enc) AS s FROM notification_channels').all());
    assert.ok(!raw.includes(HMAC_KEY) && !raw.includes(Buffer.from(HMAC_KEY).toString('hex').toUpperCase()));
  });

  test('a burst of 50 changes is one digest per channel within the interval', async () => {
    const dev = newDevice();
    imp(dev, 'x 0');
    // Let the interval since the first test's message pass: everything waiting goes out now, then the burst.
    await pass(Date.now() + 61_000);
    const before = { hook: hook.ok().length, mail: smtp.mails.length };
    for (let i = 1; i <= 50; i++) imp(dev, `x ${i}`);
    await pass(Date.now() + 122_000);
    await hook.waitFor(() => hook.ok().length === before.hook + 1 && smtp.mails.length === before.mail + 1);
    const digest = JSON.parse(hook.ok().at(-1)!.body);
    assert.equal(digest.event, 'digest');
    assertDocumented(digest);
    assert.equal(digest.events.length, 50);
    assert.ok(digest.events.every((e: { event: string }) => e.event === 'config_changed'));
    // More events inside the interval wait for it.
    imp(dev, 'x 51');
    await pass(Date.now() + 123_000);
    assert.equal(hook.ok().length, before.hook + 1);
    await pass(Date.now() + 190_000);
    await hook.waitFor(() => hook.ok().length === before.hook + 2);
    assert.equal(JSON.parse(hook.ok().at(-1)!.body).event, 'config_changed');
  });

  test('failed deliveries are retried with backoff under the same delivery id, then dead', async () => {
    const flakyHook = await new WebhookReceiver().start();
    flakyHook.status = 500;
    try {
      await createChannel(db(), SYSTEM_ACTOR, t.appliance.secrets, policy, { name: 'flaky', type: 'webhook', url: flakyHook.url });
      createRule(db(), SYSTEM_ACTOR, { name: 'failures', events: ['backup_failed'], channels: ['flaky'] });
      const dev = newDevice();
      const started = startBackup(db(), dev, tpl, 'manual');
      await finishBackup(db(), t.appliance.snapshots, started, { ok: false, failure: 'AUTH_FAILED', message: 'Login refused' });
      // The clock of the digest interval is moved on (the other channels' messages are long gone); retries run on real time.
      await pass(Date.now() + 400_000);
      const row = () =>
        db().prepare("SELECT d.* FROM notification_deliveries d JOIN notification_channels c ON c.id = d.channel_id WHERE c.name = 'flaky'").get() as {
          id: string;
          status: string;
          attempts: number;
          next_attempt_at: number;
          last_error: string;
        };
      await flakyHook.waitFor(() => row().attempts === 1);
      assert.equal(row().status, 'pending');
      assert.match(row().last_error, /HTTP 500/);
      assert.ok(row().next_attempt_at >= Date.now() + backoffMs(1) - 1000);
      // Not due yet: nothing is sent.
      await pass(Date.now() + 1000);
      assert.equal(row().attempts, 1);
      await pass(row().next_attempt_at + 1);
      await flakyHook.waitFor(() => row().attempts === 2);
      assert.ok(row().next_attempt_at - Date.now() > backoffMs(1), 'the wait doubles');
      await pass(row().next_attempt_at + 1);
      await flakyHook.waitFor(() => row().attempts === 3);
      assert.equal(row().status, 'dead');
      assert.equal(flakyHook.hits.length, 3);
      assert.equal(new Set(flakyHook.hits.map((h) => h.headers['x-confvault-delivery'])).size, 1, 'one delivery id across retries');
      const body = JSON.parse(flakyHook.hits[0].body);
      assertDocumented(body);
      assert.equal(body.event, 'backup_failed');
      assert.equal(body.backup.failure_type, 'AUTH_FAILED');
      assert.match(body.summary, /AUTH_FAILED: Login refused/);
      await pass(Date.now() + 10_000_000);
      assert.equal(flakyHook.hits.length, 3, 'a dead delivery is not retried');
    } finally {
      await flakyHook.stop();
    }
  });

  test('a rule for a group sends its devices and its subgroups’ devices, never another group’s', async () => {
    const a = seedGroup(db(), 'A');
    const a1 = seedGroup(db(), 'A1', a);
    const b = seedGroup(db(), 'B');
    await createChannel(db(), SYSTEM_ACTOR, t.appliance.secrets, policy, { name: 'team-a', type: 'webhook', url: hook.url });
    createRule(db(), SYSTEM_ACTOR, { name: 'only-a', events: ['config_changed', 'device_unreachable', 'device_recovered'], channels: ['team-a'], groups: [a] });
    const inA1 = newDevice(a1);
    const inB = newDevice(b);
    for (const d of [inA1, inB]) {
      imp(d, 'v1');
      imp(d, 'v2');
      recordReachability(db(), d, 'unreachable', 'timed out');
      recordReachability(db(), d, 'unreachable', 'timed out');
      recordReachability(db(), d, 'reachable', null);
    }
    const rows = db()
      .prepare(
        "SELECT o.event, o.device_id, o.item FROM notification_outbox o JOIN notification_channels c ON c.id = o.channel_id WHERE c.name = 'team-a' ORDER BY o.id",
      )
      .all() as { event: string; device_id: number; item: string }[];
    assert.deepEqual(
      rows.map((r) => r.event),
      ['config_changed', 'device_unreachable', 'device_recovered'],
    );
    assert.ok(rows.every((r) => r.device_id === inA1));
    assert.equal(JSON.parse(rows[0].item).item.device.group_path, 'A/A1');
    // The diff is off unless the rule asks for it.
    assert.equal(JSON.parse(rows[0].item).diff, null);
    assert.ok(!rows.some((r) => r.item.includes(`"id":${inB},`)));
  });

  test('stale devices are announced once per episode, and a good backup ends the episode', async () => {
    await createChannel(db(), SYSTEM_ACTOR, t.appliance.secrets, policy, { name: 'stale', type: 'webhook', url: hook.url });
    createRule(db(), SYSTEM_ACTOR, { name: 'stale', events: ['backup_stale'], channels: ['stale'] });
    const old = newDevice();
    const fresh = newDevice();
    const dayMs = 86_400_000;
    rawState(
      db(),
      'devices created ten days ago: only the clock makes it',
      'UPDATE devices SET created_at = ? WHERE id IN (?, ?)',
      Date.now() - 10 * dayMs,
      old,
      fresh,
    );
    importBackup(db(), SYSTEM_ACTOR, t.appliance.snapshots, old, config('old'), Date.now() - 3 * dayMs);
    imp(fresh, 'fresh');
    const before = outboxCount('stale');
    checkStaleDevices(db(), 48);
    const staleRows = () =>
      db()
        .prepare("SELECT device_id FROM notification_outbox o JOIN notification_channels c ON c.id = o.channel_id WHERE c.name = 'stale'")
        .pluck()
        .all() as number[];
    assert.ok(staleRows().includes(old));
    assert.ok(!staleRows().includes(fresh));
    const afterFirst = outboxCount('stale');
    assert.ok(afterFirst > before);
    checkStaleDevices(db(), 48);
    assert.equal(outboxCount('stale'), afterFirst, 'announced once');
    imp(old, 'good again');
    checkStaleDevices(db(), 48);
    assert.equal(outboxCount('stale'), afterFirst, 'a device with a fresh backup is not stale');
  });

  test('Send test: delivered and logged; an unreachable receiver is reported and shown dead', async () => {
    const ok = await sendTestMessage(deps, SYSTEM_ACTOR, 'hook');
    assert.equal(ok.error, null);
    const testHit = hook.ok().find((h) => h.headers['x-confvault-delivery'] === ok.delivery_id);
    assert.equal(JSON.parse(testHit!.body).event, 'test');
    assertDocumented(JSON.parse(testHit!.body));
    const gone = await new WebhookReceiver().start();
    await gone.stop();
    await createChannel(db(), SYSTEM_ACTOR, t.appliance.secrets, policy, { name: 'nowhere', type: 'webhook', url: gone.url });
    const bad = await sendTestMessage(deps, SYSTEM_ACTOR, 'nowhere');
    assert.equal(bad.error, 'connection refused');
    assert.equal(db().prepare('SELECT status FROM notification_deliveries WHERE id = ?').pluck().get(bad.delivery_id), 'dead');
  });

  test('syslog out (RFC 5424 over UDP, octet-counted over TCP) and Slack / Teams incoming-webhook bodies', async () => {
    const udp = createSocket('udp4');
    const udpLines: string[] = [];
    udp.on('message', (m) => udpLines.push(m.toString('utf8')));
    await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
    const tcpData: string[] = [];
    const tcp = createServer((sock) => sock.setEncoding('utf8').on('data', (d: string) => tcpData.push(d)));
    await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
    try {
      await createChannel(db(), SYSTEM_ACTOR, t.appliance.secrets, policy, { name: 'sys-udp', type: 'syslog', url: `udp://127.0.0.1:${udp.address().port}` });
      await createChannel(db(), SYSTEM_ACTOR, t.appliance.secrets, policy, {
        name: 'sys-tcp',
        type: 'syslog',
        url: `tcp://127.0.0.1:${(tcp.address() as AddressInfo).port}`,
      });
      const u = await sendTestMessage(deps, SYSTEM_ACTOR, 'sys-udp');
      const c = await sendTestMessage(deps, SYSTEM_ACTOR, 'sys-tcp');
      assert.equal(u.error, null);
      assert.equal(c.error, null);
      await hook.waitFor(() => udpLines.length === 1 && tcpData.join('').length > 0);
      const line = /^<29>1 \d{4}-\d\d-\d\dT[\d:.]+Z \S+ confvault - test \[confvault@32473 delivery="([0-9a-f-]{36})" event="test"\] Test message/;
      assert.equal(line.exec(udpLines[0])?.[1], u.delivery_id);
      const framed = /^(\d+) (.*)$/s.exec(tcpData.join(''));
      assert.ok(framed);
      assert.equal(Number(framed[1]), Buffer.byteLength(framed[2]));
      assert.equal(line.exec(framed[2])?.[1], c.delivery_id);
      // Slack and Teams: the URL is the secret (never listed); the body is what their incoming webhooks take.
      await createChannel(db(), SYSTEM_ACTOR, t.appliance.secrets, policy, { name: 'slack', type: 'slack', secret: hook.url + '?token=slack-token' });
      await createChannel(db(), SYSTEM_ACTOR, t.appliance.secrets, policy, { name: 'teams', type: 'teams', secret: hook.url + '?token=teams-token' });
      assert.equal((await sendTestMessage(deps, SYSTEM_ACTOR, 'slack')).error, null);
      assert.match(JSON.parse(hook.ok().at(-1)!.body).text, /^Test message from confvault to channel slack/);
      assert.equal((await sendTestMessage(deps, SYSTEM_ACTOR, 'teams')).error, null);
      const card = JSON.parse(hook.ok().at(-1)!.body);
      assert.equal(card['@type'], 'MessageCard');
      assert.match(card.text, /channel teams/);
      assert.equal(card.attachments[0].contentType, 'application/vnd.microsoft.card.adaptive');
      assert.match(card.attachments[0].content.body[0].text, /channel teams/);
      const listed = JSON.stringify(listChannels(db(), SYSTEM_ACTOR));
      assert.ok(!listed.includes('slack-token') && !listed.includes('teams-token'));
    } finally {
      udp.close();
      await new Promise((r) => tcp.close(r));
    }
  });

  test('changed_by is carried when the backups table records it (event-driven backups)', async () => {
    await createChannel(db(), SYSTEM_ACTOR, t.appliance.secrets, policy, { name: 'who', type: 'webhook', url: hook.url });
    createRule(db(), SYSTEM_ACTOR, { name: 'who', events: ['config_changed'], channels: ['who'] });
    const dev = newDevice();
    imp(dev, 'a');
    const started = startBackup(db(), dev, tpl, 'event', Date.now(), 'alice');
    await finishBackup(db(), t.appliance.snapshots, started, { ok: true, text: config('b'), ignorePatterns: [] });
    const item = JSON.parse(
      db().prepare("SELECT o.item FROM notification_outbox o JOIN notification_channels c ON c.id = o.channel_id WHERE c.name = 'who'").pluck().get() as string,
    ).item;
    assert.equal(item.backup.changed_by, 'alice');
    assert.match(item.summary, /changed by alice/);
  });

  test('pruning the delivery log removes finished deliveries with their events, never re-queues them', () => {
    const waiting = () => db().prepare('SELECT count(*) FROM notification_outbox WHERE delivery_id IS NULL').pluck().get() as number;
    const w0 = waiting();
    const finished = db().prepare("SELECT count(*) FROM notification_deliveries WHERE status <> 'pending'").pluck().get() as number;
    assert.ok(finished > 0);
    // Earlier tests moved the worker's clock forward: prune "before" a time after all of them.
    const taken = db().prepare('SELECT count(*) FROM notification_outbox WHERE delivery_id IS NOT NULL').pluck().get() as number;
    assert.equal(pruneDeliveries(db(), Date.now() + 10 ** 10), finished);
    assert.ok(taken > (db().prepare('SELECT count(*) FROM notification_outbox WHERE delivery_id IS NOT NULL').pluck().get() as number));
    assert.equal(waiting(), w0);
    assert.equal(db().prepare("SELECT count(*) FROM notification_deliveries WHERE status <> 'pending'").pluck().get(), 0);
  });
});
