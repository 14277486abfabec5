// The scheduler's tick at fleet size: every enabled device's effective schedule (own, nearest group's, appliance's),
// read as each cron firing and each minute's re-read does, on a database of 100,000 devices in a group tree.
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync } from 'node:fs';
import { migrate } from '../../src/db/migrate';
import { openDatabase, type DB } from '../../src/db/open';
import { effectiveSchedules, scheduleReader } from '../../src/features/backups/backup-engine.service';
import { ms, num, percentile, row, type Section } from './common';

const GLOBAL = '0 2 * * *';

/**
 * Raw inserts (a bench database, not a test's): 4 regions > 5 sites > 5 closets (124 groups), some with schedules
 * at every level; `devices` devices spread over the closets and ungrouped, 2 % disabled, 5 % with their own schedule.
 */
export function seedScheduleFleet(db: DB, devices: number): void {
  const now = Date.now();
  db.transaction(() => {
    const cred = db
      .prepare("INSERT INTO credentials (name, username, password_enc, created_at, updated_at) VALUES ('bench', 'u', NULL, ?, ?)")
      .run(now, now).lastInsertRowid;
    const tpl = db
      .prepare("INSERT INTO templates (name, vendor, description, builtin, spec, created_at, updated_at) VALUES ('bench', 'v', '', 0, '{}', ?, ?)")
      .run(now, now).lastInsertRowid;
    const group = db.prepare('INSERT INTO device_groups (name, parent_id, schedule, created_at, updated_at) VALUES (?, ?, ?, ?, ?)');
    const closets: number[] = [];
    for (let r = 0; r < 4; r++) {
      const region = Number(group.run(`region-${r}`, null, r === 0 ? '0 1 * * *' : null, now, now).lastInsertRowid);
      for (let s = 0; s < 5; s++) {
        const site = Number(group.run(`site-${r}-${s}`, region, s === 1 ? `0 ${3 + r} * * *` : null, now, now).lastInsertRowid);
        for (let c = 0; c < 5; c++) closets.push(Number(group.run(`closet-${r}-${s}-${c}`, site, c === 2 ? `30 ${s} * * *` : null, now, now).lastInsertRowid));
      }
    }
    const device = db.prepare(
      `INSERT INTO devices (name, hostname, port, protocol, group_id, credential_id, template_id, enabled, schedule, created_at, updated_at)
       VALUES (?, '192.0.2.1', 22, 'ssh', ?, ?, ?, ?, ?, ?, ?)`,
    );
    for (let i = 0; i < devices; i++) {
      const groupId = i % 50 === 7 ? null : closets[i % closets.length];
      device.run(`d${i}`, groupId, cred, tpl, i % 50 === 3 ? 0 : 1, i % 20 === 11 ? `15 ${i % 24} * * *` : null, now, now);
    }
  })();
}

/**
 * The scheduler's tick over `devices` devices: its reader (scheduleReader) as each minute's re-read and each firing call
 * it while nothing changed, and a full read after a schedule change (effectiveSchedules), median and p95 of `rounds`.
 */
export function runSchedulerBench(say: (line: string) => void, opts: { devices: number; rounds: number }): Section {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'confvault-sched-bench-'));
  try {
    const file = path.join(dir, 'confvault.db');
    const db = openDatabase(file);
    migrate(db, file);
    seedScheduleFleet(db, opts.devices);
    const read = scheduleReader(db, GLOBAL);
    read();
    const time = (f: () => number) => {
      const samples: number[] = [];
      let n = 0;
      for (let i = 0; i < opts.rounds; i++) {
        const t0 = performance.now();
        n = f();
        samples.push(performance.now() - t0);
      }
      return { p50: percentile(samples, 50), p95: percentile(samples, 95), n };
    };
    const tick = time(() => read().size);
    // A change before each read: a device's own schedule set and cleared in turn.
    const change = db.prepare('UPDATE devices SET schedule = ? WHERE id = (SELECT min(id) FROM devices)');
    let flip = false;
    const full = time(() => {
      flip = !flip;
      change.run(flip ? '45 4 * * *' : null);
      return read().size;
    });
    const cold = time(() => effectiveSchedules(db, GLOBAL).size);
    db.close();
    say(
      `  scheduler tick, ${num(opts.devices)} devices: unchanged p50 ${ms(tick.p50)}, p95 ${ms(tick.p95)}; after a change p50 ${ms(full.p50)}, p95 ${ms(full.p95)} (${tick.n} schedules)`,
    );
    return {
      title: `Scheduler tick (${num(opts.devices)} devices, 124 groups)`,
      rows: [
        row(
          `tick, nothing changed, ${num(opts.devices)} devices (p50 / p95 of ${opts.rounds})`,
          `${ms(tick.p50)} / ${ms(tick.p95)}`,
          '< 100 ms per tick',
          tick.p95 < 100,
          {
            p50_ms: tick.p50,
            p95_ms: tick.p95,
            schedules: tick.n,
          },
        ),
        row(`tick after a schedule change (full read), ${num(opts.devices)} devices`, `${ms(full.p50)} / ${ms(full.p95)}`, 'report only', null, {
          p50_ms: full.p50,
          p95_ms: full.p95,
        }),
        row(`effective schedules computed afresh, ${num(opts.devices)} devices`, `${ms(cold.p50)} / ${ms(cold.p95)}`, 'report only', null, {
          p50_ms: cold.p50,
          p95_ms: cold.p95,
        }),
      ],
      notes: [
        "Each cron firing and each minute's re-read of `serve` asks scheduleReader (src/features/backups/backup-engine.service.ts), on the main thread: one row lookup while the schedule_version counter (schema 0030, moved by triggers on devices and groups) stands still, a full read of every enabled device after a change.",
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
