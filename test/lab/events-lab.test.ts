// Event-driven backups against the real lab: FRR logs its commands through rsyslog in r1's namespace to `serve`'s syslog receiver, and the change is notified to a webhook and an SMTP server.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { runCliAsync, spawnServe } from '../helpers/appliance';
import { SmtpReceiver, WebhookReceiver, type WebhookHit } from '../notifications/receivers';
import { LAB_DEVICES, vtysh } from './lab';
import { LabAppliance, labSkip, takeLab } from './backup-lab.shared';

const skip = labSkip();
const r1 = LAB_DEVICES.r1;
/** r1 on the lab bridge: its syslog comes from this address (lab.sh: rsyslog forwards to 10.201.0.1:5514). */
const R1_LAN = '10.201.0.11';
/** Channel secrets given to `confvault notify channel add --secret-stdin`: they must never reach a payload. */
const HMAC_KEY = 'lab-hmac-key-not-in-payloads';
const SMTP_PASS = 'lab-smtp-pass-not-in-payloads';
/** r1's BGP neighbour password (test/lab/etc/r1/frr/frr.conf), redacted by the frr template. */
const BGP_SECRET = 'LabBgpSecret1';
let release: () => void = () => undefined;

before(async () => {
  if (skip) return;
  release = await takeLab();
});
after(() => release());

interface EventRow {
  id: string;
  trigger: string;
  changed_by: string | null;
  changed: number;
  success: number;
  started_at: number;
  finished_at: number | null;
}

interface ConfigChanged {
  event: string;
  delivery_id: string;
  device: { id: number; name: string; hostname: string; group_path: string | null };
  backup: { id: string; trigger: string; changed_by: string | null; success: boolean; failure_type: string | null };
  diff?: string;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const max = (xs: number[]) => Math.max(...xs);

test(
  'a change made in vtysh on r1 gives an event backup holding the change, after the debounce window, notified to a webhook and by e-mail with the diff',
  { skip, timeout: 300_000 },
  async () => {
    const conf = [
      '[server]',
      'listen = "127.0.0.1:0"',
      '',
      '[backup]',
      'retries = 0',
      '',
      '[events]',
      'syslog_listen = "10.201.0.1:5514"',
      'debounce_seconds = 2',
      '',
    ];
    // No digest interval: each change is its own notification, at once.
    conf.push('[notifications]', 'min_interval_seconds = 0', 'allowed_destinations = ["127.0.0.1"]', '');
    const app = await LabAppliance.start(conf.join('\n'));
    const hook = await new WebhookReceiver().start();
    const smtp = await new SmtpReceiver().start();
    const route = (n: number) => `ip route 203.0.113.${n}/32 Null0`;
    const made: number[] = [];
    try {
      const db = app.t.services.db;
      const credential = await app.createCredential({ name: 'lab r1', username: r1.username, password: r1.password });
      const template = await app.templateId('frr');
      const dev = await app.call<{ id: number }>('POST', '/devices', 201, {
        name: 'r1',
        hostname: R1_LAN,
        port: 22,
        credential_id: credential,
        template_id: template,
      });
      // FRR logs commands only once told to; the baseline backup then holds these two lines too.
      await vtysh('r1', 'configure terminal', 'log syslog informational', 'log commands');
      const base = await app.backupNow(dev.id);
      assert.equal(base.result, 'ok', base.message ?? '');

      // Channels and rule as an operator sets them up: `confvault notify` against the same appliance.
      const cli = async (args: string[], input?: string) => {
        const r = await runCliAsync([...args, '--config', app.configFile, '--data-dir', app.dataDir], { input });
        assert.equal(r.status, 0, `confvault ${args.join(' ')}: ${r.stderr}`);
      };
      await cli(['notify', 'channel', 'add', 'hook', '--type', 'webhook', '--url', hook.url, '--secret-stdin'], `${HMAC_KEY}\n`);
      await cli(
        [
          'notify',
          'channel',
          'add',
          'mail',
          '--type',
          'email',
          '--smtp-host',
          '127.0.0.1',
          '--smtp-port',
          String(smtp.port),
          '--smtp-tls',
          'none',
          '--smtp-user',
          'mailer',
          '--from',
          'confvault@example.net',
          '--to',
          'noc@example.net',
          '--secret-stdin',
        ],
        `${SMTP_PASS}\n`,
      );
      await cli(['notify', 'rule', 'add', 'changes', '--events', 'config_changed', '--channels', 'hook,mail', '--include-diff']);

      const served = await spawnServe(['--config', app.configFile, '--data-dir', app.dataDir], { CONFVAULT_LOG_LEVEL: 'info' });
      const events = db.prepare(
        "SELECT id, trigger, changed_by, changed, success, started_at, finished_at FROM backups WHERE device_id = ? AND trigger = 'event' ORDER BY started_at",
      );
      const toBackup: number[] = [];
      const toWebhook: number[] = [];
      const backupToWebhook: number[] = [];
      const hitsFor = (backupId: string): { hit: WebhookHit; body: ConfigChanged }[] =>
        hook
          .ok()
          .map((hit) => ({ hit, body: JSON.parse(hit.body) as ConfigChanged }))
          .filter((h) => h.body.backup?.id === backupId);
      try {
        // rsyslog reconnects within a second or two of serve binding the receiver, and delivers what it queued meanwhile
        // (the "log commands" lines above, which are configuration commands too): wait until that backup is over.
        for (let seen = -1; ;) {
          await sleep(3000);
          const rows = events.all(dev.id) as EventRow[];
          if (rows.length === seen && rows.every((r) => r.finished_at !== null)) break;
          seen = rows.length;
        }
        for (let i = 0; i < Number(process.env.CONFVAULT_LAB_EVENT_CHANGES ?? 3); i++) {
          const n = 100 + i;
          const before = (events.all(dev.id) as EventRow[]).length;
          const t0 = Date.now();
          await vtysh('r1', 'configure terminal', route(n));
          made.push(n);
          let row: EventRow | undefined;
          for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(20)) {
            const rows = events.all(dev.id) as EventRow[];
            if (rows.length > before && rows.at(-1)!.finished_at !== null) {
              row = rows.at(-1);
              break;
            }
          }
          assert.ok(row, `an event backup within 30 s of change ${i + 1}; serve said:\n${served.output().stdout.slice(-3000)}${served.output().stderr}`);
          toBackup.push(row.finished_at! - t0);
          // The notification can only follow the record's transaction (the outbox is written in it): poll for it now.
          let hits = hitsFor(row.id);
          for (const deadline = Date.now() + 20_000; hits.length === 0 && Date.now() < deadline; await sleep(20)) hits = hitsFor(row.id);
          assert.equal(
            hits.length,
            1,
            `one webhook for event backup ${row.id} within 20 s; received: ${hook.hits.map((h) => h.body).join('\n')}\nserve said:\n${served.output().stdout.slice(-3000)}`,
          );
          const webhookAt = Date.now();
          toWebhook.push(webhookAt - t0);
          backupToWebhook.push(webhookAt - row.finished_at!);

          assert.equal(row.success, 1);
          assert.equal(row.changed, 1, 'the event backup holds a changed configuration');
          assert.equal(row.changed_by, null, 'FRR does not name the user in its command log');
          assert.ok(
            row.started_at - t0 >= 1900,
            `started only after the 2 s debounce window: ${row.started_at - t0} ms after the change, all: ${JSON.stringify(events.all(dev.id))}`,
          );
          const text = await app.content(row.id);
          const line = route(n);
          assert.match(text ?? '', new RegExp(`^${line.replace(/\./g, '\\.')}$`, 'm'), 'the stored configuration has the change');
          assert.equal((events.all(dev.id) as EventRow[]).length, before + 1, 'one backup per change');

          // The webhook: config_changed for this event backup, the diff shows the vtysh change, the HMAC verifies.
          const { hit, body } = hits[0];
          assert.equal(body.event, 'config_changed');
          assert.equal(body.delivery_id, hit.headers['x-confvault-delivery']);
          assert.deepEqual(body.device, { id: dev.id, name: 'r1', hostname: R1_LAN, group_path: null });
          assert.deepEqual(body.backup, { id: row.id, trigger: 'event', changed_by: null, success: true, failure_type: null });
          assert.match(body.diff ?? '', new RegExp(`^\\+${line.replace(/\./g, '\\.')}$`, 'm'), `the diff adds the route: ${body.diff}`);
          const ts = hit.headers['x-confvault-timestamp'];
          assert.ok(Math.abs(Number(ts) - Date.now() / 1000) < 60, `a current timestamp: ${ts}`);
          assert.equal(
            hit.headers['x-confvault-signature'],
            'sha256=' + createHmac('sha256', HMAC_KEY).update(`${ts}.${hit.body}`).digest('hex'),
            'the HMAC verifies',
          );

          // The mail: the same change, the diff in its text, sent with the stored SMTP password.
          const mailFor = () => smtp.mails.find((m) => m.data.includes(`+${line}`));
          for (const deadline = Date.now() + 20_000; !mailFor() && Date.now() < deadline;) await sleep(50);
          const mail = mailFor();
          assert.ok(mail, `a mail with the diff of change ${i + 1} within 20 s; got ${smtp.mails.length} mails`);
          assert.deepEqual(mail.to, ['noc@example.net']);
          assert.match(mail.data, /Message-ID: <[0-9a-f-]{36}@confvault>/i);
          assert.deepEqual(smtp.auth.at(-1), { user: 'mailer', pass: SMTP_PASS });

          // No credential secret in either payload: the device login, r1's BGP password, the channel secrets.
          for (const payload of [hit.body, JSON.stringify(hit.headers), mail.data]) {
            for (const secret of [r1.password, BGP_SECRET, HMAC_KEY, SMTP_PASS]) assert.ok(!payload.includes(secret), `${secret} absent from every payload`);
          }
        }
      } finally {
        assert.equal(await served.stop(), 0, 'serve stops cleanly');
      }
      console.log(
        `# change in vtysh -> stored event backup -> webhook received over ${toBackup.length} changes (debounce 2 s): ` +
          `backup median ${median(toBackup)} ms, max ${max(toBackup)} ms; ` +
          `backup->webhook median ${median(backupToWebhook)} ms, max ${max(backupToWebhook)} ms; ` +
          `webhook median ${median(toWebhook)} ms, max ${max(toWebhook)} ms`,
      );
    } finally {
      await vtysh('r1', 'configure terminal', ...made.map((n) => `no ${route(n)}`), 'no log commands', 'no log syslog');
      await hook.stop();
      await smtp.stop();
      await app.close();
    }
  },
);
