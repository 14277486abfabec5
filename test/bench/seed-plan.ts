// The seeded fleet and its backup history, planned in memory before anything is written: devices, versions, a year of records.
import { FLEET_MIX, prng } from './seed-configs';

export const DEVICES = 10_000;
/** Records of the 9,999 ordinary devices together (about 100 each). */
export const REGULAR_RECORDS = 1_000_000;
/** Records of the one busy device (index 0), whose configuration is about 200 KB. */
export const BIG_RECORDS = 100_000;
export const BIG_VERSIONS = 40;
export const YEAR_MS = 365 * 86_400_000;

/** Group tree: region > site > closet; 100 devices per closet. */
export const REGIONS = ['emea', 'amer', 'apac', 'lab'];
export const SITES_PER_REGION = 5;
export const CLOSETS_PER_SITE = 5;
export const DEVICES_PER_CLOSET = DEVICES / (REGIONS.length * SITES_PER_REGION * CLOSETS_PER_SITE);

/** Failure types recorded for failed attempts, with their share and a message like the engine's. */
export const FAILURES: ReadonlyArray<{ type: string; weight: number; message: (host: string) => string; unreachable: boolean }> = [
  { type: 'TIMEOUT', weight: 40, unreachable: true, message: (h) => `No answer from ${h}:22 within 10 s (connect timeout).` },
  { type: 'CONNECTION_REFUSED', weight: 20, unreachable: true, message: (h) => `${h}:22 refused the connection: nothing listens on that port.` },
  { type: 'AUTH_FAILED', weight: 15, unreachable: false, message: (h) => `${h}:22 rejected the login of user "backup": check the credential.` },
  { type: 'DISCONNECTED', weight: 10, unreachable: false, message: (h) => `${h}:22 closed the connection while "show running-config" was running.` },
  {
    type: 'PROMPT_NOT_FOUND',
    weight: 10,
    unreachable: false,
    message: (h) => `No prompt from ${h}:22 within 20 s after login: check the template's prompt pattern.`,
  },
  { type: 'COMMAND_FAILED', weight: 5, unreachable: false, message: (h) => `The capture commands on ${h}:22 returned no configuration text.` },
];

export interface PlannedDevice {
  index: number;
  name: string;
  hostname: string;
  template: string;
  /** Index into the closet list (0-99), closets numbered region by region. */
  closet: number;
  protocol: 'ssh' | 'telnet';
  enabled: boolean;
  /** Key of the device's first version among all versions (versions of device d are versionBase[d] + 0..n-1). */
  versionBase: number;
  versions: number;
}

export interface Plan {
  end: number;
  devices: PlannedDevice[];
  totalVersions: number;
  /** Records, columns of typed arrays; `order` lists them by start time. */
  records: {
    count: number;
    device: Int32Array;
    startedAt: Float64Array;
    duration: Int32Array;
    /** -1: success; otherwise an index into FAILURES. */
    failure: Int8Array;
    version: Int16Array;
    order: Uint32Array;
  };
}

function pickWeighted<T>(items: ReadonlyArray<T>, weight: (t: T) => number, r: number): T {
  const total = items.reduce((s, t) => s + weight(t), 0);
  let x = r * total;
  for (const t of items) {
    x -= weight(t);
    if (x < 0) return t;
  }
  return items[items.length - 1];
}

/** Records per device: 100,000 for device 0, 50-150 (paired so they add up exactly) for the others. */
function recordCounts(rnd: () => number): Int32Array {
  const counts = new Int32Array(DEVICES);
  counts[0] = BIG_RECORDS;
  const regular = DEVICES - 1;
  const mean = Math.floor(REGULAR_RECORDS / regular);
  for (let d = 1; d < DEVICES; d += 2) {
    const k = Math.floor(rnd() * 101) - 50;
    counts[d] = mean + k;
    if (d + 1 < DEVICES) counts[d + 1] = mean - k;
  }
  let sum = 0;
  for (let d = 1; d < DEVICES; d++) sum += counts[d];
  counts[DEVICES - 1] += REGULAR_RECORDS - sum;
  return counts;
}

export function planFleet(end: number): Plan {
  const rnd = prng(20250601);
  const start = end - YEAR_MS;
  const counts = recordCounts(rnd);
  const total = counts.reduce((s, n) => s + n, 0);
  const device = new Int32Array(total);
  const startedAt = new Float64Array(total);
  const duration = new Int32Array(total);
  const failure = new Int8Array(total);
  const version = new Int16Array(total);
  const devices: PlannedDevice[] = [];
  let versionBase = 0;
  let r = 0;
  for (let d = 0; d < DEVICES; d++) {
    const big = d === 0;
    const closet = Math.floor(d / DEVICES_PER_CLOSET);
    const region = REGIONS[Math.floor(closet / (SITES_PER_REGION * CLOSETS_PER_SITE))];
    const site = Math.floor(closet / CLOSETS_PER_SITE) % SITES_PER_REGION;
    const template = big ? 'cisco-ios' : pickWeighted(FLEET_MIX, (m) => m[1], rnd())[0];
    const name = big
      ? `${region}-s${site}-core-chassis1`
      : `${region}-s${site}-c${closet % CLOSETS_PER_SITE}-${template.split('-')[0]}-${String(d).padStart(5, '0')}`;
    const hostname = `10.${closet}.${Math.floor((d % DEVICES_PER_CLOSET) / 250)}.${(d % 250) + 1}`;
    // Configurations change a few times a year (exponential, 1-12 versions), the chassis weekly.
    const versions = big ? BIG_VERSIONS : 1 + Math.min(11, Math.floor(-Math.log(1 - rnd()) * 2.2));
    const changes = Array.from({ length: versions - 1 }, () => start + rnd() * YEAR_MS).sort((a, b) => a - b);
    // Most devices rarely fail, some are flaky, a few are broken for long stretches.
    const u = rnd();
    const failRate = u < 0.9 ? 0.02 : u < 0.98 ? 0.15 : 0.6;
    const n = counts[d];
    const period = YEAR_MS / n;
    const phase = rnd() * period;
    let v = 0;
    for (let k = 0; k < n; k++, r++) {
      const t = Math.min(end - 60_000, start + phase + k * period + Math.floor(rnd() * 60_000));
      while (v < changes.length && changes[v] <= t) v++;
      device[r] = d;
      startedAt[r] = Math.floor(t);
      version[r] = v;
      if (rnd() < failRate) {
        const f = pickWeighted(FAILURES, (x) => x.weight, rnd());
        failure[r] = FAILURES.indexOf(f);
        duration[r] = f.type === 'TIMEOUT' ? 10_000 : 1_000 + Math.floor(rnd() * 20_000);
      } else {
        failure[r] = -1;
        duration[r] = (big ? 8_000 : 2_000) + Math.floor(rnd() * 20_000);
      }
    }
    devices.push({
      index: d,
      name,
      hostname,
      template,
      closet,
      protocol: !big && rnd() < 0.03 ? 'telnet' : 'ssh',
      enabled: big || rnd() >= 0.02,
      versionBase,
      versions,
    });
    versionBase += versions;
  }
  // The appliance records backups as they happen: the table (and its indexes) grow in time order.
  const order = new Uint32Array(total);
  for (let i = 0; i < total; i++) order[i] = i;
  order.sort((a, b) => startedAt[a] - startedAt[b] || a - b);
  return { end, devices, totalVersions: versionBase, records: { count: total, device, startedAt, duration, failure, version, order } };
}
