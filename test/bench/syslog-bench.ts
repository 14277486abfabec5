// Syslog flood: 10,000 messages/s for 10 s from many loopback addresses into the receiver; event-loop delay and pending backups.
import dgram from 'node:dgram';
import { forkBench, nextMessage, num, row, type Section } from './common';

interface Ready {
  ready: { udpPort: number };
}
interface Done {
  done: {
    p50_ms: number;
    p99_ms: number;
    max_ms: number;
    received: number;
    unknown: number;
    change_events: number;
    udp: number;
    max_pending: number;
    devices: number;
  };
}
const isReady = (m: unknown): m is Ready => !!m && typeof m === 'object' && 'ready' in m;
const isDone = (m: unknown): m is Done => !!m && typeof m === 'object' && 'done' in m;

/** Half the senders are devices (127.0.1.1..N) sending change messages; the rest unknown addresses (127.0.2.x). */
export async function runSyslogBench(say: (line: string) => void, o: { rate: number; seconds: number; devices: number; senders: number }): Promise<Section> {
  const child = forkBench('syslog-worker.ts');
  try {
    const readyP = nextMessage(child, isReady, 120_000);
    child.send({ devices: o.devices });
    const { udpPort } = (await readyP).ready;
    const sockets: dgram.Socket[] = [];
    for (let i = 0; i < o.senders; i++) {
      const s = dgram.createSocket('udp4');
      const addr = i % 2 === 0 ? `127.0.1.${((i >> 1) % o.devices) + 1}` : `127.0.2.${((i >> 1) % 250) + 1}`;
      await new Promise<void>((r) => s.bind(0, addr, () => r()));
      sockets.push(s);
    }
    const msg = Buffer.from('<189>12: *Nov 24 10:00:00: %SYS-5-CONFIG_I: Configured from console by admin on vty0 (192.0.2.9)');
    child.send({ measure: true });
    const began = performance.now();
    let sent = 0;
    while (performance.now() - began < o.seconds * 1000) {
      const due = Math.floor(((performance.now() - began) / 1000) * o.rate);
      while (sent < due) sockets[sent++ % sockets.length].send(msg, udpPort, '127.0.0.1');
      await new Promise((r) => setTimeout(r, 10));
    }
    const elapsed = (performance.now() - began) / 1000;
    await new Promise((r) => setTimeout(r, 500));
    const doneP = nextMessage(child, isDone, 60_000);
    child.send({ stop: true });
    const d = (await doneP).done;
    for (const s of sockets) s.close();
    say(
      `  flood: ${num(sent)} datagrams in ${elapsed.toFixed(1)} s (${num(Math.round(sent / elapsed))}/s) from ${o.senders} addresses; received ${num(d.udp)}`,
    );
    say(
      `  event-loop delay p50 ${d.p50_ms.toFixed(1)} ms, p99 ${d.p99_ms.toFixed(1)} ms, max ${d.max_ms.toFixed(1)} ms; pending backups at most ${d.max_pending} for ${d.devices} devices`,
    );
    return {
      title: 'Syslog flood (event-driven backups)',
      rows: [
        row(
          'flood rate achieved',
          `${num(Math.round(sent / elapsed))} msg/s for ${elapsed.toFixed(0)} s`,
          `${num(o.rate)} msg/s for ${o.seconds} s`,
          sent / elapsed >= o.rate * 0.9,
        ),
        row('event-loop delay p99 under the flood', `${d.p99_ms.toFixed(1)} ms`, '< 50 ms', d.p99_ms < 50),
        row('pending event backups', `${d.max_pending} for ${d.devices} devices`, 'at most one per device', d.max_pending <= d.devices),
        row('messages received (UDP; loss is the kernel buffer)', `${num(d.udp)} of ${num(sent)}`, 'info', null),
      ],
      notes: [
        `unknown senders counted: ${num(d.unknown)}; change events from devices: ${num(d.change_events)} (debounced into at most one backup per device).`,
      ],
    };
  } finally {
    child.kill();
  }
}

/**
 * Change in the lab → stored backup → webhook received: runs test/lab/events-lab.test.ts (FRR in r1, rsyslog, `serve`
 * with a webhook channel, a config_changed rule with the diff, `[notifications] min_interval_seconds = 0`) with
 * `changes` changes and reads the figures it prints. Needs the device lab (root); reported as skipped without it.
 */
export async function runLabEventBench(say: (line: string) => void, changes: number): Promise<Section> {
  const { spawn } = await import('node:child_process');
  const { REPO_ROOT } = await import('./common');
  const out = await new Promise<{ code: number | null; text: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--test', 'test/lab/events-lab.test.ts'], {
      cwd: REPO_ROOT,
      env: { ...process.env, CONFVAULT_LAB_EVENT_CHANGES: String(changes) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let text = '';
    child.stdout.on('data', (d) => (text += d));
    child.stderr.on('data', (d) => (text += d));
    child.on('exit', (code) => resolve({ code, text }));
  });
  const m =
    /over (\d+) changes \(debounce (\d+) s\): backup median (\d+) ms, max (\d+) ms; backup->webhook median (\d+) ms, max (\d+) ms; webhook median (\d+) ms, max (\d+) ms/.exec(
      out.text,
    );
  const skipped = /# SKIP|skipped/.test(out.text) && !m;
  const [n, debounce, backupMed, backupMax, legMed, legMax, hookMed, hookMax] = m ? m.slice(1).map(Number) : [];
  if (m) {
    say(`  ${n} changes in vtysh on r1 (debounce ${debounce} s, notifications min_interval_seconds 0):`);
    say(`    change → stored event backup: median ${backupMed} ms, max ${backupMax} ms`);
    say(`    stored backup → webhook received: median ${legMed} ms, max ${legMax} ms`);
    say(`    change → webhook received: median ${hookMed} ms, max ${hookMax} ms (${hookMed - debounce * 1000} ms after the debounce window)`);
  } else say(`  lab leg ${skipped ? 'skipped (no device lab here)' : `failed (exit ${out.code})`}${skipped ? '' : `:\n${out.text.slice(-3000)}`}`);
  const debounceMs = m ? debounce * 1000 : 0;
  return {
    title: 'Event-driven backup and notification latency (device lab)',
    rows: m
      ? [
          row('debounce window used', `${debounce} s`, 'info', null),
          row('change in vtysh → stored backup, median', `${backupMed} ms`, 'info', null),
          row('change in vtysh → stored backup, max', `${backupMax} ms`, 'info', null),
          row('stored backup → webhook received, median', `${legMed} ms`, 'info', null),
          row('stored backup → webhook received, max', `${legMax} ms`, 'info', null),
          row('change in vtysh → webhook received, median', `${hookMed} ms`, `< debounce + 5 s (${(debounceMs + 5000) / 1000} s)`, hookMed < debounceMs + 5000),
          row('change in vtysh → webhook received, max', `${hookMax} ms`, 'info', null),
        ]
      : [
          row(
            'change in vtysh → stored backup → webhook received',
            skipped ? 'skipped: no device lab' : 'failed',
            `${changes} changes`,
            skipped ? null : false,
          ),
        ],
    notes: [
      'FRR 8.4 in r1 logs each command (`log commands`, `log syslog`) to rsyslog in its namespace, which forwards over TCP (RFC 5424, octet counting) to `serve`.',
      '`serve` has a webhook channel (HMAC key) and an e-mail channel, and a config_changed rule with the diff; `[notifications] min_interval_seconds = 0`, the delivery worker passes once a second. The test polls the database and the receiver every 20 ms.',
    ],
  };
}
