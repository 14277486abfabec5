// Bench child: a migrated appliance database with devices on 127.0.1.x, the real syslog receiver and event backups, and an event-loop delay monitor.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { openAppliance } from '../../src/app/bootstrap';
import { loadConfig, type AppConfig } from '../../src/config/config';
import { EventBackups } from '../../src/events/event-backups';
import { startSyslogReceiver } from '../../src/events/receiver';
import { BackupRunner } from '../../src/engine/runner';
import { seedBuiltinTemplate, seedCredential, seedDevice } from '../helpers/seed';

interface Start {
  devices: number;
}

process.once('message', (m: Start) => {
  void main(m).catch((err: unknown) => process.send?.({ error: err instanceof Error ? err.message : String(err) }));
});

async function main(m: Start): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'confvault-syslog-bench-'));
  const base = loadConfig({ dataDir: path.join(dir, 'data') }, { CONFVAULT_LOG_LEVEL: 'silent' });
  const config: Readonly<AppConfig> = { ...base, events: { ...base.events, syslog_listen: '127.0.0.1:0', trust_hostname: false, debounce_seconds: 30 } };
  const a = openAppliance({}, config);
  const cred = seedCredential(a.db, a.secrets, { name: 'c', username: 'u', password: 'p' });
  const tpl = seedBuiltinTemplate(a.db, 'cisco-ios');
  a.db.transaction(() => {
    for (let i = 1; i <= m.devices; i++) seedDevice(a.db, { name: `d${i}`, hostname: `127.0.1.${i}`, port: 22, credential_id: cred, template_id: tpl });
  })();
  const runner = new BackupRunner({ db: a.db, secrets: a.secrets, snapshots: a.snapshots, config });
  const events = new EventBackups({ db: a.db, runner, config });
  await events.start();
  let maxPending = 0;
  const receiver = await startSyslogReceiver({
    listen: '127.0.0.1:0',
    onMessage: (addr, raw) => {
      events.handle(addr, raw);
      if (events.pendingCount() > maxPending) maxPending = events.pendingCount();
    },
  });
  const h = monitorEventLoopDelay({ resolution: 5 });
  process.send?.({ ready: { udpPort: receiver.udpPort } });
  process.on('message', (msg: { measure?: boolean; stop?: boolean }) => {
    if (msg.measure) {
      h.reset();
      h.enable();
    }
    if (msg.stop) {
      h.disable();
      const result = {
        p50_ms: h.percentile(50) / 1e6,
        p99_ms: h.percentile(99) / 1e6,
        max_ms: h.max / 1e6,
        received: events.counters.received,
        unknown: events.counters.unknown_senders,
        change_events: events.counters.change_events,
        udp: receiver.stats.udp_messages,
        max_pending: maxPending,
        devices: m.devices,
      };
      void (async () => {
        await receiver.close();
        await events.stop();
        a.close();
        rmSync(dir, { recursive: true, force: true });
        process.send?.({ done: result });
      })();
    }
  });
}
