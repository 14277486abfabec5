// Event-driven backups against the real lab: FRR logs its commands through rsyslog in r1's namespace to `serve`'s syslog receiver.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { spawnServe } from '../helpers/appliance';
import { LAB_DEVICES, vtysh } from './lab';
import { LabAppliance, labSkip, takeLab } from './backup-lab.shared';

const skip = labSkip();
const r1 = LAB_DEVICES.r1;
/** r1 on the lab bridge: its syslog comes from this address (lab.sh: rsyslog forwards to 10.201.0.1:5514). */
const R1_LAN = '10.201.0.11';
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

test('a change made in vtysh on r1 gives an event backup holding the change, after the debounce window', { skip, timeout: 180_000 }, async () => {
  const app = await LabAppliance.start(
    ['[server]', 'listen = "127.0.0.1:0"', '', '[backup]', 'retries = 0', '', '[events]', 'syslog_listen = "10.201.0.1:5514"', 'debounce_seconds = 2', ''].join(
      '\n',
    ),
  );
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

    const served = await spawnServe(['--config', app.configFile, '--data-dir', app.dataDir], { CONFVAULT_LOG_LEVEL: 'info' });
    const events = db.prepare(
      "SELECT id, trigger, changed_by, changed, success, started_at, finished_at FROM backups WHERE device_id = ? AND trigger = 'event' ORDER BY started_at",
    );
    const latencies: number[] = [];
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
        for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(50)) {
          const rows = events.all(dev.id) as EventRow[];
          if (rows.length > before && rows.at(-1)!.finished_at !== null) {
            row = rows.at(-1);
            break;
          }
        }
        assert.ok(row, `an event backup within 30 s of change ${i + 1}; serve said:\n${served.output().stdout.slice(-3000)}${served.output().stderr}`);
        latencies.push(row.finished_at! - t0);
        assert.equal(row.success, 1);
        assert.equal(row.changed, 1, 'the event backup holds a changed configuration');
        assert.equal(row.changed_by, null, 'FRR does not name the user in its command log');
        assert.ok(
          row.started_at - t0 >= 1900,
          `started only after the 2 s debounce window: ${row.started_at - t0} ms after the change, all: ${JSON.stringify(events.all(dev.id))}`,
        );
        const text = await app.content(row.id);
        assert.match(text ?? '', new RegExp(`^${route(n).replace(/\./g, '\\.')}$`, 'm'), 'the stored configuration has the change');
        assert.equal((events.all(dev.id) as EventRow[]).length, before + 1, 'one backup per change');
      }
    } finally {
      assert.equal(await served.stop(), 0, 'serve stops cleanly');
    }
    const sorted = [...latencies].sort((a, b) => a - b);
    console.log(
      `# change in vtysh -> stored event backup over ${latencies.length} changes (debounce 2 s): median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted.at(-1)} ms`,
    );
  } finally {
    await vtysh('r1', 'configure terminal', ...made.map((n) => `no ${route(n)}`), 'no log commands', 'no log syslog');
    await app.close();
  }
});
