// Compliance at fleet size: every device's newest version judged against 100 rules in the compliance workers (a rule change's re-judge), the event loop's delay meanwhile, and one new version judged as it is stored.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { openAppliance, type Appliance } from '../../src/app/bootstrap';
import { loadConfig } from '../../src/config/config';
import { finishBackupSync, startBackup } from '../../src/features/backups/backup-record.service';
import { importBackup } from '../../src/features/backups/import.service';
import { complianceIdle, rejudgeFleet } from '../../src/features/compliance/compliance.service';
import { importRules } from '../../src/features/compliance/compliance-rules.service';
import { SYSTEM_ACTOR } from '../../src/identity/actor';
import { ms, num, percentile, row, type Section } from './common';

/** Distinct configurations among the fleet (a fleet repeats its standard builds; each text is its own snapshot file). */
const DISTINCT = 500;

/** An IOS-style configuration of about 170 lines that passes some rules and fails others, varying with `i`. */
export function benchConfig(i: number): string {
  const lines = [`hostname sw${i}`, 'service password-encryption', 'ip ssh version 2', i % 3 ? 'no ip http server' : 'ip http server', 'aaa new-model'];
  lines.push(`logging host 10.${i % 250}.0.1`, 'ntp server 10.0.0.1', ...(i % 4 ? ['ntp server 10.0.0.2'] : []));
  lines.push(`snmp-server community ${i % 5 ? `c${i}` : 'public'} RO`);
  for (let p = 0; p < 24; p++) {
    lines.push(
      `interface GigabitEthernet0/${p}`,
      ...(p % 5 ? [` description port ${p} of ${i}`] : []),
      ' switchport mode access',
      ` switchport access vlan ${10 + (p % 4)}`,
    );
    lines.push(p % 7 ? ' no shutdown' : ' shutdown', ' spanning-tree portfast', '!');
  }
  lines.push(
    'line con 0',
    ` exec-timeout ${i % 6 ? 5 : 30} 0`,
    'line vty 0 4',
    ' exec-timeout 10 0',
    i % 9 ? ' transport input ssh' : ' transport input ssh telnet',
  );
  lines.push('banner motd ^CAuthorised access only^C', 'end');
  return lines.join('\n') + '\n';
}

/** 100 rules of every kind: 30 must exist, 20 must not exist, 20 values, 20 sections, 10 golden snippets. */
export function benchRules(): string {
  const must = ['^ip ssh version 2$', '^logging host ', '^aaa new-model$', '^service password-encryption$', '^banner motd ', '^hostname sw'];
  const mustNot = ['^ip http server$', '^snmp-server community public ', '^service finger$', '^ip source-route$'];
  const out: string[] = [];
  const add = (id: string, check: string) =>
    out.push(`- id: ${id}\n  title: ${id}\n  severity: medium\n  applies_to: {templates: [cisco-ios]}\n  check: ${check}`);
  for (let i = 0; i < 30; i++) add(`exist-${i}`, `{kind: must_exist, line: '${must[i % must.length]}'}`);
  for (let i = 0; i < 20; i++) add(`absent-${i}`, `{kind: must_not_exist, line: '${mustNot[i % mustNot.length]}'}`);
  for (let i = 0; i < 20; i++) {
    const checks = [
      `{kind: value, capture: '^ntp server (\\S+)', count_min: 2}`,
      `{kind: value, capture: '^\\s*exec-timeout (\\d+)', min: 1, max: 10}`,
      `{kind: value, capture: '^snmp-server community (\\S+)', not_in: [public, private]}`,
      `{kind: value, capture: '^\\s*switchport access vlan (\\d+)', max: 4094}`,
    ];
    add(`value-${i}`, checks[i % checks.length]);
  }
  for (let i = 0; i < 20; i++) {
    const checks = [
      `{kind: sections, match: '^interface ', must_contain: ['^description '], must_not_contain: ['^shutdown$']}`,
      `{kind: sections, match: '^line vty', must_contain: ['^transport input ssh$'], must_not_contain: [telnet]}`,
    ];
    add(`section-${i}`, checks[i % checks.length]);
  }
  for (let i = 0; i < 10; i++) {
    add(
      `golden-${i}`,
      `{kind: golden, extra_match: '^ntp server ', snippet: "hostname {{device.name}}\\nntp server 10.0.0.1\\nntp server 10.0.0.2\\nline vty 0 4\\n exec-timeout 10 0\\n transport input ssh\\n"}`,
    );
  }
  return out.join('\n') + '\n';
}

/** 10,000 devices with one stored version each (`DISTINCT` distinct texts), raw inserts for the rows, the real store for the texts. */
function seedFleet(a: Appliance, devices: number): { template: number; ids: number[] } {
  const now = Date.now();
  const db = a.db;
  const cred = Number(db.prepare("INSERT INTO credentials (name, username, created_at, updated_at) VALUES ('bench', 'u', ?, ?)").run(now, now).lastInsertRowid);
  // The built-in template (openAppliance synced it): the rules apply to cisco-ios, the hierarchy is read by indentation.
  const tpl = db.prepare("SELECT id FROM templates WHERE name = 'cisco-ios'").pluck().get() as number;
  const device = db.prepare(
    "INSERT INTO devices (name, hostname, port, protocol, credential_id, template_id, created_at, updated_at) VALUES (?, '192.0.2.1', 22, 'ssh', ?, ?, ?, ?)",
  );
  const ids: number[] = [];
  db.transaction(() => {
    for (let i = 0; i < devices; i++) {
      const id = Number(device.run(`sw${i}`, cred, tpl, now, now).lastInsertRowid);
      ids.push(id);
      const started = startBackup(db, id, tpl, 'import', now - 60_000);
      finishBackupSync(db, a.snapshots, started, { ok: true, text: benchConfig(i % DISTINCT), ignorePatterns: [] }, now - 59_000);
    }
  })();
  return { template: tpl, ids };
}

export async function runComplianceBench(say: (line: string) => void, opts: { devices: number; rules: number }): Promise<Section> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'confvault-compliance-bench-'));
  const a = openAppliance({}, loadConfig({ dataDir: path.join(dir, 'data') }, { CONFVAULT_LOG_LEVEL: 'silent' }));
  try {
    const t0 = performance.now();
    const { ids } = seedFleet(a, opts.devices);
    say(`  seeded ${num(opts.devices)} devices (${DISTINCT} distinct configurations) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    importRules(a.db, SYSTEM_ACTOR, benchRules(), 'bench-rules.yaml');
    // The worker's code is bundled once (development) and the rule set compiled once per worker: warm both.
    await rejudgeFleet(a.db, a.snapshots, 'warm-up').done;
    importRules(a.db, SYSTEM_ACTOR, benchRules().replace('title: exist-0\n', 'title: exist-0 changed\n'), 'bench-rules.yaml');

    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    const f0 = performance.now();
    const end = await rejudgeFleet(a.db, a.snapshots, 'bench').done;
    const fleetMs = performance.now() - f0;
    const elu = performance.eventLoopUtilization(elu0).utilization;
    const cpu = process.cpuUsage(cpu0);
    // CPU time of the whole process (workers and event loop): what the re-judge costs whatever else the machine runs.
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    loop.disable();
    const p99 = loop.percentile(99) / 1e6;
    say(`  event loop busy ${(elu * 100).toFixed(1)} % of the re-judge (saving results); max delay ${ms(loop.max / 1e6)}; CPU ${cpuSeconds.toFixed(1)} s`);
    const results = a.db.prepare('SELECT count(*) FROM compliance_results').pluck().get() as number;
    say(
      `  fleet re-judge: ${num(end.done)} versions x ${opts.rules} rules in ${(fleetMs / 1000).toFixed(2)} s, event-loop p99 ${ms(p99)}, ${num(results)} results`,
    );

    const single: number[] = [];
    for (let i = 0; i < 20; i++) {
      const s0 = performance.now();
      importBackup(a.db, SYSTEM_ACTOR, a.snapshots, ids[i], benchConfig(DISTINCT + i), Date.now() + i);
      await complianceIdle(a.db);
      single.push(performance.now() - s0);
    }
    const median = percentile(single, 50);
    say(`  one new version stored and judged: median ${ms(median)}, p95 ${ms(percentile(single, 95))}`);
    return {
      title: `Compliance (${num(opts.devices)} devices x ${opts.rules} rules, compliance workers)`,
      rows: [
        row(`fleet re-judge, ${num(opts.devices)} x ${opts.rules} rules`, `${(fleetMs / 1000).toFixed(2)} s`, '<= 10 s', fleetMs <= 10_000, {
          results,
          state: end.state,
        }),
        row('event loop p99 during the re-judge', ms(p99), '< 50 ms', p99 < 50, { busy_percent: Number((elu * 100).toFixed(1)) }),
        row('CPU time of the re-judge (workers and event loop; wall time on 2 idle cores is about half)', `${cpuSeconds.toFixed(1)} s`, 'report', null),
        row('one new version judged (import, record, judge, results saved)', ms(median), '<= 50 ms', median <= 50, {
          samples_ms: single.map((v) => Number(v.toFixed(1))),
        }),
      ],
      notes: [`synthetic IOS-style configurations of ~170 lines; 30 must-exist, 20 must-not-exist, 20 value, 20 section and 10 golden rules.`],
    };
  } finally {
    a.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
