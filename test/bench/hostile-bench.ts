// Hostile load: /healthz latency while 4 backtracking-bomb regex searches, 2 diffs of 10 MB configurations and a 1,000-device backup run go on together.
import { WebClient } from '../web/web-client';
import { forkBench, loadAverage, ms, nextMessage, num, percentile, row, stopChild, type Section } from './common';
import { startSimulator } from './engine-bench';
import { BENCH_ADMIN_PASSWORD, isHostileReady, isHostileRunDone } from './hostile-worker';

const HEALTHZ_P99_TARGET_MS = 50;
const HOSTILE_QUERIES = ['^ description uplink to the (.|.)*zzz$', '(.|.)*zzz$', '(\\w|\\d)+$', '(\\w+\\s?){1,30}#$'];

interface Loop {
  count: number;
  times: number[];
  partial: number;
  errors: number;
}

/** Repeats `once` until `stop` says so; the time of each round, its failures. */
async function loop(stop: () => boolean, once: () => Promise<{ ok: boolean; partial?: boolean }>): Promise<Loop> {
  const out: Loop = { count: 0, times: [], partial: 0, errors: 0 };
  while (!stop()) {
    const t0 = performance.now();
    const r = await once().catch(() => ({ ok: false, partial: false }));
    out.times.push(performance.now() - t0);
    out.count++;
    if (!r.ok) out.errors++;
    if (r.partial) out.partial++;
  }
  return out;
}

const merge = (loops: Loop[]): Loop => ({
  count: loops.reduce((s, l) => s + l.count, 0),
  times: loops.flatMap((l) => l.times),
  partial: loops.reduce((s, l) => s + l.partial, 0),
  errors: loops.reduce((s, l) => s + l.errors, 0),
});

/**
 * `parts` (default all three) is for finding out what costs the event loop: without the backup run the load
 * lasts a fixed 15 s. CONFVAULT_BENCH_HOSTILE_PARTS=run,search,diff picks them from `npm run bench`.
 */
export async function runHostileBench(
  say: (line: string) => void,
  o: { devices: number; parts?: ReadonlySet<'run' | 'search' | 'diff'>; cpuProfileDir?: string },
): Promise<Section> {
  const parts = o.parts ?? new Set(['run', 'search', 'diff']);
  const sim = await startSimulator(o.devices);
  const child = forkBench('hostile-worker.ts', [], { cpuProfileDir: o.cpuProfileDir });
  try {
    const readyP = nextMessage(child, isHostileReady, 600_000);
    child.send({ sim: sim.info });
    const ready = (await readyP).ready;
    say(
      `  appliance ready in ${ready.seed_s.toFixed(1)} s: ${num(sim.info.devices.length)} simulated devices, ${ready.searchDevices} search devices, three 10 MB versions`,
    );
    const web = new WebClient(ready.url);
    const login = await web.login('admin', BENCH_ADMIN_PASSWORD);
    if (login.status !== 303) throw new Error(`bench login failed: ${login.status}`);

    let stopped = false;
    const stop = () => stopped;
    const runDoneP = nextMessage(child, isHostileRunDone, 900_000);
    child.send({ start: { run: parts.has('run'), seconds: 15 } });
    const began = performance.now();

    const healthz: number[] = [];
    let healthzErrors = 0;
    const poller = (async () => {
      while (!stopped) {
        const t0 = performance.now();
        try {
          const r = await fetch(`${ready.url}/healthz`);
          await r.arrayBuffer();
          if (r.status !== 200) healthzErrors++;
        } catch {
          healthzErrors++;
        }
        healthz.push(performance.now() - t0);
        await new Promise((res) => setTimeout(res, 20));
      }
    })();
    const searches = HOSTILE_QUERIES.filter(() => parts.has('search')).map((q) =>
      loop(stop, async () => {
        const r = await web.get(`/search?mode=regex&q=${encodeURIComponent(q)}`);
        return { ok: r.res.status === 200, partial: r.html.includes('id="search-partial"') };
      }),
    );
    const pairs = [
      [ready.versions.a, ready.versions.b],
      [ready.versions.b, ready.versions.c],
    ];
    const diffs = pairs
      .filter(() => parts.has('diff'))
      .map(([a, b]) =>
        loop(stop, async () => {
          const r = await web.fetch(`/api/devices/${ready.bigDevice}/diff?a=${a}&b=${b}`);
          await r.arrayBuffer();
          return { ok: r.status === 200 };
        }),
      );
    const done = (await runDoneP).runDone;
    stopped = true;
    const wall = (performance.now() - began) / 1000;
    const [s, d] = [merge(await Promise.all(searches)), merge(await Promise.all(diffs))];
    await poller;

    const p99 = percentile(healthz, 99);
    return {
      title: `Hostile load: ${HOSTILE_QUERIES.length} bomb-regex searches + 2 diffs of 10 MB configurations + a ${num(done.devices)}-device backup run, together${parts.size < 3 ? ` (only: ${[...parts].join(', ')})` : ''}`,
      rows: [
        row(
          '/healthz p99 during the load',
          `${ms(p99)} (p50 ${ms(percentile(healthz, 50))}, max ${ms(Math.max(...healthz))}, ${num(healthz.length)} requests, ${healthzErrors} failed)`,
          `< ${HEALTHZ_P99_TARGET_MS} ms`,
          p99 < HEALTHZ_P99_TARGET_MS && healthzErrors === 0,
          { samples: healthz.length },
        ),
        row(
          'event-loop delay p99 (monitorEventLoopDelay)',
          `${ms(done.eld_p99_ms)} (p50 ${ms(done.eld_p50_ms)}, max ${ms(done.eld_max_ms)})`,
          'report only',
          null,
        ),
        row('event-loop utilization (main thread busy)', `${(done.elu * 100).toFixed(0)} %`, 'report only', null),
        row(
          'backup run',
          `${num(done.succeeded)} / ${num(done.devices)} succeeded in ${(done.wall_ms / 1000).toFixed(1)} s`,
          'all',
          parts.has('run') ? done.succeeded === done.devices : null,
        ),
        row(
          'hostile searches answered',
          `${num(s.count)} (median ${ms(percentile(s.times, 50))}, max ${ms(Math.max(0, ...s.times))}; ${s.partial} partial, ${s.errors} errors)`,
          'no errors',
          s.errors === 0,
        ),
        row(
          '10 MB diffs answered',
          `${num(d.count)} (median ${ms(percentile(d.times, 50))}, max ${ms(Math.max(0, ...d.times))}; ${d.errors} errors)`,
          'no errors',
          d.errors === 0,
        ),
      ],
      notes: [
        `one appliance process (server + runner, as in production; searches and diffs on its worker pool), the clients and the simulator in other processes; ${wall.toFixed(0)} s of load; load average after: ${loadAverage()}.`,
        'diff pairs: 10 MB vs 10 MB with one line in 500 edited (aligned), and 10 MB vs an unrelated 10 MB (too different to align: both versions).',
      ],
    };
  } finally {
    await stopChild(child);
    await stopChild(sim.child);
  }
}
