// Issue #20 item 1: channels reach only allowed_destinations (checked on resolved addresses, at create and at every connect), and no byte of a receiver's answer reaches the user.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createChannel, listDeliveries } from '../../src/features/notifications/notifications.service';
import { sendTestMessage, type SendDeps } from '../../src/features/notifications/notifications.worker';
import { createRole } from '../../src/features/roles/roles.service';
import { createUser } from '../../src/features/users/users.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { DestinationPolicy } from '../../src/lib/destinations';
import { runCliAsync, startTestAppliance, type TestAppliance } from '../helpers/appliance';
import { seedGroup } from '../helpers/seed';
import { WebClient } from '../web/web-client';

const BANNER = 'SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3';
const HTTP_BODY = 'internal-admin-console-body';

/** A loopback listener that counts connections; `answer` writes what a non-receiver would write. */
async function listener(answer: (sock: Socket) => void): Promise<{ server: Server; port: number; connections: () => number; close: () => Promise<void> }> {
  const open = new Set<Socket>();
  let n = 0;
  const server = createServer((sock) => {
    n++;
    open.add(sock);
    sock.on('error', () => undefined).on('close', () => open.delete(sock));
    answer(sock);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  // A banner server keeps its connections open: closing it ends them.
  const close = () => {
    for (const sock of open) sock.destroy();
    return new Promise<void>((r) => server.close(() => r()));
  };
  return { server, port: (server.address() as AddressInfo).port, connections: () => n, close };
}

async function httpListener(status: number, headers: Record<string, string> = {}) {
  let n = 0;
  const server: HttpServer = createHttpServer((req, res) => {
    n++;
    req.resume();
    res.writeHead(status, { 'X-Internal': HTTP_BODY, ...headers }).end(HTTP_BODY);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, connections: () => n };
}

describe('notification destinations (issue #20)', () => {
  let t: TestAppliance;
  let ssh: Awaited<ReturnType<typeof listener>>;
  let outside: Awaited<ReturnType<typeof listener>>;
  let http: Awaited<ReturnType<typeof httpListener>>;
  let redirect: Awaited<ReturnType<typeof httpListener>>;
  let admin: WebClient;
  let scoped: WebClient;
  let deps: SendDeps;
  const BASE = '/settings/notifications';

  before(async () => {
    ssh = await listener((s) => s.write(`${BANNER}\r\n`));
    outside = await listener((s) => s.end(`${BANNER}\r\n`));
    http = await httpListener(404);
    redirect = await httpListener(302, { Location: `http://127.0.0.1:${outside.port}/elsewhere` });
    const allowed = [ssh.port, http.port, redirect.port].map((p) => `127.0.0.1:${p}`).join(',');
    t = await startTestAppliance({ CONFVAULT_NOTIFY_ALLOWED_DESTINATIONS: allowed });
    deps = { db: t.appliance.db, secrets: t.appliance.secrets, snapshots: t.appliance.snapshots, config: t.services.config };
    const db = t.appliance.db;
    const a = seedGroup(db, 'dest-A');
    createRole(db, SYSTEM_ACTOR, { name: 'dest-notifier', permissions: ['settings.view', 'settings.update'] });
    await createUser(db, SYSTEM_ACTOR, { username: 'dest-admin', password: 'dest-admin-password-1', role: 'administrator' });
    await createUser(db, SYSTEM_ACTOR, { username: 'dest-scoped', password: 'dest-scoped-password-1', role: 'dest-notifier', groups: [a] });
    admin = new WebClient(t.url);
    assert.equal((await admin.login('dest-admin', 'dest-admin-password-1')).status, 303);
    scoped = new WebClient(t.url);
    assert.equal((await scoped.login('dest-scoped', 'dest-scoped-password-1')).status, 303);
  });

  after(async () => {
    await ssh.close();
    await outside.close();
    for (const s of [http.server, redirect.server]) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
    await t.close();
  });

  test('a user scoped to one group cannot add a channel at all (reproduction 1)', async () => {
    const r = await scoped.post(
      `${BASE}/channels`,
      { name: 'probe', type: 'email', smtp_host: '127.0.0.1', smtp_port: String(ssh.port), smtp_tls: 'none', from: 'a@example.net', to: 'b@example.net' },
      { csrf: true },
    );
    // The form shows the refusal in place (as every refused form of the web interface does).
    assert.equal(r.res.status, 422);
    assert.match(r.html, /Adding a notification channel needs device-group scope (&quot;|")all/);
    assert.equal(ssh.connections(), 0);
  });

  test('a destination outside allowed_destinations is a 422 naming the field, and receives no connection (web, CLI)', async () => {
    const before = outside.connections();
    let r = await admin.post(
      `${BASE}/channels`,
      {
        name: 'mail-out',
        type: 'email',
        smtp_host: '127.0.0.1',
        smtp_port: String(outside.port),
        smtp_tls: 'none',
        from: 'a@example.net',
        to: 'b@example.net',
      },
      { csrf: true },
    );
    assert.equal(r.res.status, 422);
    assert.match(r.html, /not in allowed_destinations/);
    r = await admin.post(`${BASE}/channels`, { name: 'hook-out', type: 'webhook', url: `http://127.0.0.1:${outside.port}/internal/admin?x=1` }, { csrf: true });
    assert.equal(r.res.status, 422);
    r = await admin.post(`${BASE}/channels`, { name: 'sys-out', type: 'syslog', url: `tcp://127.0.0.1:${outside.port}` }, { csrf: true });
    assert.equal(r.res.status, 422);
    // A name is checked on what it resolves to: localhost is loopback, which only an address entry can allow.
    r = await admin.post(`${BASE}/channels`, { name: 'by-name', type: 'webhook', url: `http://localhost:${outside.port}/` }, { csrf: true });
    assert.equal(r.res.status, 422);
    r = await admin.post(`${BASE}/channels`, { name: 'v6', type: 'webhook', url: `http://[::1]:${http.port}/` }, { csrf: true });
    assert.equal(r.res.status, 422);
    assert.equal(outside.connections(), before);
    assert.equal(t.appliance.db.prepare('SELECT count(*) FROM notification_channels').pluck().get(), 0);
  });

  test('an SSH banner and an HTTP error page never reach the user: only a failure class (web test send, delivery log)', async () => {
    let r = await admin.post(
      `${BASE}/channels`,
      { name: 'ssh-mail', type: 'email', smtp_host: '127.0.0.1', smtp_port: String(ssh.port), smtp_tls: 'none', from: 'a@example.net', to: 'b@example.net' },
      { csrf: true },
    );
    assert.equal(r.res.status, 303);
    r = await admin.post(`${BASE}/channels`, { name: 'http-hook', type: 'webhook', url: `http://127.0.0.1:${http.port}/internal/admin?x=1` }, { csrf: true });
    assert.equal(r.res.status, 303);
    r = await admin.post(`${BASE}/channels`, { name: 'moved', type: 'webhook', url: `http://127.0.0.1:${redirect.port}/hook` }, { csrf: true });
    assert.equal(r.res.status, 303);
    r = await admin.post(`${BASE}/channels`, { name: 'ssh-hook', type: 'webhook', url: `http://127.0.0.1:${ssh.port}/` }, { csrf: true });
    assert.equal(r.res.status, 303);
    const sshBefore = ssh.connections();
    const outsideBefore = outside.connections();
    await admin.post(`${BASE}/channels/ssh-mail/test`, {}, { csrf: true });
    await admin.post(`${BASE}/channels/http-hook/test`, {}, { csrf: true });
    await admin.post(`${BASE}/channels/moved/test`, {}, { csrf: true });
    await admin.post(`${BASE}/channels/ssh-hook/test`, {}, { csrf: true });
    assert.ok(ssh.connections() > sshBefore, 'the allowed listener was reached');
    assert.equal(outside.connections(), outsideBefore, 'the redirect target was never reached');
    const names = ['ssh-mail', 'http-hook', 'moved', 'ssh-hook'];
    const pages = await Promise.all(names.map((n) => admin.get(`${BASE}?channel=${n}`)));
    const errors = names.map((n) => listDeliveries(t.appliance.db, SYSTEM_ACTOR, n)[0].last_error);
    assert.equal(errors[0], 'protocol error: the receiver did not answer as expected');
    assert.equal(errors[1], 'HTTP 404 from the receiver');
    assert.match(errors[2] ?? '', /redirect, not followed/);
    assert.equal(errors[3], 'protocol error: the receiver did not answer as expected');
    for (const text of [...pages.map((p) => p.html), ...errors.map(String)]) {
      assert.ok(!text.includes('SSH-2.0') && !text.includes('OpenSSH'), 'no banner byte');
      assert.ok(!text.includes(HTTP_BODY), 'no body or header of the far end');
    }
  });

  test('the check runs again at connect time: a channel whose destination is no longer allowed is never connected', async () => {
    const before = ssh.connections();
    const narrowed: SendDeps = { ...deps, config: { ...deps.config, notifications: { ...deps.config.notifications, allowed_destinations: ['192.0.2.0/24'] } } };
    const r = await sendTestMessage(narrowed, SYSTEM_ACTOR, 'ssh-mail');
    assert.match(r.error ?? '', /^destination refused: 127\.0\.0\.1:\d+ is not in allowed_destinations$/);
    const w = await sendTestMessage(narrowed, SYSTEM_ACTOR, 'http-hook');
    assert.match(w.error ?? '', /^destination refused/);
    assert.equal(ssh.connections(), before);
  });

  test('the CLI refuses a destination outside allowed_destinations with the field named (exit 1), and allows a listed one', async () => {
    const dataDir = t.appliance.dataDir;
    const env = { CONFVAULT_NOTIFY_ALLOWED_DESTINATIONS: `127.0.0.1:${http.port}` };
    let r = await runCliAsync(['notify', 'channel', 'add', 'cli-out', '--type', 'syslog', '--url', `tcp://127.0.0.1:${outside.port}`, '--data-dir', dataDir], {
      env,
    });
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, /url: 127\.0\.0\.1:\d+ is not in allowed_destinations/);
    r = await runCliAsync(['notify', 'channel', 'add', 'cli-in', '--type', 'webhook', '--url', `http://127.0.0.1:${http.port}/x`, '--data-dir', dataDir], {
      env,
    });
    assert.equal(r.status, 0, r.stderr);
    r = await runCliAsync(['notify', 'channel', 'test', 'cli-in', '--data-dir', dataDir], { env });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /failed: HTTP 404 from the receiver/);
    assert.ok(!r.stderr.includes(HTTP_BODY));
  });

  test('the policy: special addresses, IPv4-mapped IPv6, host names, ports and catch-alls', async () => {
    const open = new DestinationPolicy([]);
    for (const a of ['127.0.0.1', '::1', '169.254.169.254', 'fe80::1', '::ffff:127.0.0.1', '0.0.0.0', '224.0.0.1'])
      assert.equal(open.allows('x', a, 80), false, a);
    assert.equal(open.allows('hooks.example.net', '192.0.2.10', 443), true);
    const listed = new DestinationPolicy(['hooks.example.net:443', '10.0.0.0/8', '[2001:db8::/32]:8443', '0.0.0.0/0:25']);
    assert.equal(listed.allows('hooks.example.net', '192.0.2.10', 443), true);
    assert.equal(listed.allows('hooks.example.net', '192.0.2.10', 80), false, 'port');
    assert.equal(listed.allows('hooks.example.net', '127.0.0.1', 443), false, 'a name never covers loopback');
    assert.equal(listed.allows('other', '10.1.2.3', 22), true);
    assert.equal(listed.allows('other', '2001:db8::5', 8443), true);
    assert.equal(listed.allows('other', '2001:db9::5', 8443), false);
    assert.equal(listed.allows('mx', '198.51.100.1', 25), true);
    assert.equal(listed.allows('mx', '127.0.0.1', 25), false, 'a catch-all does not cover loopback');
    await assert.rejects(listed.resolve('127.0.0.1', 25), /not in allowed_destinations/);
    assert.equal(await new DestinationPolicy(['127.0.0.1']).resolve('127.0.0.1', 9), '127.0.0.1');
    assert.throws(() => new DestinationPolicy(['http://x']), /allowed_destinations/);
  });

  test('createChannel is refused for a scoped actor through the service too (the rule every door reads)', async () => {
    const principal = { ...SYSTEM_ACTOR.principal, scope: { all: false as const, groupIds: new Set([1]) } };
    await assert.rejects(
      createChannel(t.appliance.db, { ...SYSTEM_ACTOR, principal }, t.appliance.secrets, new DestinationPolicy([]), {
        name: 'svc',
        type: 'webhook',
        url: 'http://192.0.2.1/',
      }),
      /scope "all"/,
    );
  });
});
