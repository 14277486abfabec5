// Event-driven backups: syslog messages matched to devices and their templates' change events, debounced per device.
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { AppConfig } from '../config/config';
import type { DB } from '../db/open';
import type { DeviceRunResult, RunOptions } from '../engine/runner';
import { isBuiltinPattern } from '../templates/index';
import { getTemplateSpec } from '../features/templates/templates.service';
import { eventDeviceEnabled, eventInventoryVersion, inventoryGeneration, listEventDevices } from '../features/devices/event-devices.service';
import { deviceZones, queueZonedEventBackup } from '../features/collectors/collector-events.service';
import { compileChangeEvents, parseSyslog, type ChangeMatcher, type SyslogMessage } from './syslog';

/** What the event side needs of the backup runner (the same runner as the schedule, so one backup per device). */
export interface EventRunner {
  backupDevice(deviceId: number, opts: RunOptions): Promise<DeviceRunResult>;
  isRunning(deviceId: number): boolean;
}

export interface EventBackupsDeps {
  db: DB;
  runner: EventRunner;
  config: Readonly<AppConfig>;
  log?: Logger | null;
  /** Resolves a device hostname to addresses (tests pass their own); default: the system resolver. */
  resolve?: (hostname: string) => Promise<string[]>;
}

export interface EventCounters {
  /** Messages handed to the receiver. */
  received: number;
  /** Messages from an address (or, with trust_hostname, a HOSTNAME) that is no device's: counted, never stored. */
  unknown_senders: number;
  /** Messages that are not syslog (no PRI, oversize). */
  malformed: number;
  /** Messages from a device matching its template's change events. */
  change_events: number;
  /** Event backups started (a device of a remote zone: queued for its collector). */
  backups_started: number;
  /** Messages forwarded by a collector that name no device of its zone (another zone's, the central's): dropped. */
  other_zone: number;
}

/** What handleForwarded made of one batch (the answer to the collector). */
export type ForwardedCounts = Pick<EventCounters, 'received' | 'change_events' | 'other_zone' | 'unknown_senders' | 'malformed'>;

interface DeviceEntry {
  id: number;
  name: string;
  hostname: string;
  matcher: ChangeMatcher;
}

interface Pending {
  /** Time of the newest change message: the backup starts debounce_seconds after it. */
  last: number;
  users: string[];
  timer: NodeJS.Timeout | null;
  ready: boolean;
}

/** Hostnames resolved again this often (devices and templates are followed as they change, see followInventory). */
const DNS_REFRESH_MS = 5 * 60_000;
const DNS_CONCURRENCY = 8;
/** At most this many hostnames are resolved (one per device); addresses of the others are not matched. */
const MAX_RESOLVED = 100_000;
const MAX_USERS = 8;

const defaultResolve = async (hostname: string) => (await lookup(hostname, { all: true })).map((a) => a.address);

/** "::ffff:192.0.2.1" (an IPv4 sender on a dual-stack socket) → "192.0.2.1"; IPv6 lower-cased. */
export function normaliseAddress(address: string): string {
  const a = address.toLowerCase();
  return a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
}

export class EventBackups {
  readonly counters: EventCounters = { received: 0, unknown_senders: 0, malformed: 0, change_events: 0, backups_started: 0, other_zone: 0 };
  private devices = new Map<number, DeviceEntry>();
  private byAddress = new Map<string, number[]>();
  private byName = new Map<string, number[]>();
  private resolved = new Map<string, string[]>();
  /** The inventory version the device maps were built from, and the database generation it was last compared at. */
  private inventory: string | null = null;
  private inventoryGeneration: number | null = null;
  private readonly pending = new Map<number, Pending>();
  private readonly ready: number[] = [];
  private readonly running = new Map<number, Promise<void>>();
  private timers: NodeJS.Timeout[] = [];
  private retry: NodeJS.Timeout | null = null;
  private stopped = false;
  private unknownSinceLog = 0;
  private readonly debounceMs: number;
  private readonly resolve: (hostname: string) => Promise<string[]>;

  constructor(private readonly deps: EventBackupsDeps) {
    this.debounceMs = deps.config.events.debounce_seconds * 1000;
    this.resolve = deps.resolve ?? defaultResolve;
  }

  /** Loads the devices and resolves their hostnames, then keeps both fresh; logs unknown senders once a minute. */
  async start(): Promise<void> {
    this.reloadDevices();
    await this.resolveHostnames();
    const every = (ms: number, fn: () => unknown) => {
      const t = setInterval(fn, ms);
      t.unref();
      this.timers.push(t);
    };
    every(DNS_REFRESH_MS, () => void this.resolveHostnames());
    every(60_000, () => this.logUnknown());
  }

  /** Stops matching; waits for event backups already running (the runner records them). */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    if (this.retry) clearTimeout(this.retry);
    for (const p of this.pending.values()) if (p.timer) clearTimeout(p.timer);
    this.pending.clear();
    this.ready.length = 0;
    await Promise.all(this.running.values());
  }

  /** Devices with a change queued (debouncing or waiting for a slot). Never more than one entry per device. */
  pendingCount(): number {
    return this.pending.size;
  }

  /** Reads the enabled devices and their templates' change events. */
  reloadDevices(): void {
    this.inventory = eventInventoryVersion(this.deps.db);
    const specs = new Map<number, ChangeMatcher>();
    const devices = new Map<number, DeviceEntry>();
    const byName = new Map<string, number[]>();
    for (const d of listEventDevices(this.deps.db)) {
      let matcher = specs.get(d.template_id);
      if (!matcher) {
        matcher = compileChangeEvents(getTemplateSpec(this.deps.db, d.template_id)?.change_events ?? [], isBuiltinPattern);
        specs.set(d.template_id, matcher);
      }
      devices.set(d.id, { id: d.id, name: d.name, hostname: d.hostname, matcher });
      for (const key of new Set([d.name.toLowerCase(), d.hostname.toLowerCase()])) push(byName, key, d.id);
    }
    this.devices = devices;
    this.byName = byName;
    this.rebuildAddresses();
  }

  /**
   * A device or template added, edited or deleted by anyone (this process, the CLI, another server) is matched by the
   * next message: the inventory version is compared whenever the database generation has moved (a backup's records
   * move it too, so the comparison is a cheap query and the maps are rebuilt only when devices or templates changed).
   * Hostnames not resolved yet are resolved in the background.
   */
  private followInventory(): void {
    const generation = inventoryGeneration(this.deps.db);
    if (generation === null || generation === this.inventoryGeneration) return;
    this.inventoryGeneration = generation;
    if (eventInventoryVersion(this.deps.db) === this.inventory) return;
    this.reloadDevices();
    const unresolved = new Set([...this.devices.values()].map((d) => d.hostname).filter((h) => isIP(h) === 0 && !this.resolved.has(h)));
    if (unresolved.size) void this.resolveHostnames(unresolved);
  }

  /** Resolves every device hostname that is not an address (or only those in `only`), at most DNS_CONCURRENCY at a time. */
  async resolveHostnames(only?: Set<string>): Promise<void> {
    const all = [...new Set([...this.devices.values()].map((d) => d.hostname).filter((h) => isIP(h) === 0))];
    const names = (only ? all.filter((h) => only.has(h)) : all).slice(0, MAX_RESOLVED);
    const next = new Map<string, string[]>();
    let i = 0;
    const worker = async () => {
      while (i < names.length && !this.stopped) {
        const name = names[i++];
        try {
          next.set(name, (await this.resolve(name)).map(normaliseAddress));
        } catch {
          // Unresolvable now: keep what it resolved to before, if anything.
          const old = this.resolved.get(name);
          if (old) next.set(name, old);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(DNS_CONCURRENCY, names.length) }, worker));
    if (only) for (const [name, addrs] of next) this.resolved.set(name, addrs);
    else this.resolved = next;
    this.rebuildAddresses();
  }

  private rebuildAddresses(): void {
    const byAddress = new Map<string, number[]>();
    for (const d of this.devices.values()) {
      const addrs = isIP(d.hostname) ? [normaliseAddress(d.hostname)] : (this.resolved.get(d.hostname) ?? []);
      for (const a of addrs) push(byAddress, a, d.id);
    }
    this.byAddress = byAddress;
  }

  /** One received message from `address`. Synchronous and cheap: runs for every datagram of a flood. */
  handle(address: string, raw: string): void {
    const named = this.named(address, raw);
    if (named) this.matchChanges(named.ids, named.msg);
  }

  /**
   * Messages a collector of `zone` received at its site and forwarded (docs/collectors.md): matched exactly as the
   * receiver's own, but a message naming only devices outside that zone (another zone's, the central's) is dropped and
   * counted, so a collector can never start a backup outside its zone. A change queues the device for its collector.
   */
  handleForwarded(zone: string, messages: readonly { address: string; raw: string }[]): ForwardedCounts {
    const before = { ...this.counters };
    const named = messages.map((m) => this.named(m.address, m.raw));
    const zones = deviceZones(this.deps.db, [...new Set(named.flatMap((n) => n?.ids ?? []))]);
    for (const n of named) {
      if (!n) continue;
      const ids = n.ids.filter((id) => zones.get(id) === zone);
      if (ids.length === 0) this.counters.other_zone++;
      else this.matchChanges(ids, n.msg);
    }
    const delta = (k: keyof EventCounters) => this.counters[k] - before[k];
    return {
      received: delta('received'),
      change_events: delta('change_events'),
      other_zone: delta('other_zone'),
      unknown_senders: delta('unknown_senders'),
      malformed: delta('malformed'),
    };
  }

  /** The devices a message comes from (by source address, or its HOSTNAME with trust_hostname) and the parsed message; null when none or not syslog (counted). */
  private named(address: string, raw: string): { ids: number[]; msg: SyslogMessage } | null {
    if (this.stopped) return null;
    this.counters.received++;
    this.followInventory();
    let ids = this.byAddress.get(normaliseAddress(address));
    let msg = null;
    if (!ids && this.deps.config.events.trust_hostname) {
      msg = parseSyslog(raw);
      if (!msg) return this.malformed();
      const host = msg.hostname?.toLowerCase();
      if (host) ids = this.byName.get(host) ?? this.byName.get(host.split('.')[0]);
    }
    if (!ids) {
      this.counters.unknown_senders++;
      this.unknownSinceLog++;
      return null;
    }
    msg ??= parseSyslog(raw);
    if (!msg) return this.malformed();
    return { ids, msg };
  }

  private malformed(): null {
    this.counters.malformed++;
    return null;
  }

  private matchChanges(ids: readonly number[], msg: SyslogMessage): void {
    for (const id of ids) {
      const m = this.devices.get(id)?.matcher.match(msg.text);
      if (m) this.changeSeen(id, m.user);
    }
  }

  private changeSeen(id: number, user: string | null): void {
    this.counters.change_events++;
    let p = this.pending.get(id);
    if (!p) {
      p = { last: 0, users: [], timer: null, ready: false };
      this.pending.set(id, p);
    }
    p.last = Date.now();
    if (user && !p.users.includes(user) && p.users.length < MAX_USERS) p.users.push(user);
    if (!p.timer && !p.ready) this.arm(id, p, this.debounceMs);
  }

  private arm(id: number, p: Pending, ms: number): void {
    p.timer = setTimeout(() => this.onQuiet(id), ms);
    p.timer.unref();
  }

  /** The debounce timer fired: start the backup if the device has been quiet long enough, else wait the rest. */
  private onQuiet(id: number): void {
    const p = this.pending.get(id);
    if (!p || this.stopped) return;
    p.timer = null;
    const rest = p.last + this.debounceMs - Date.now();
    if (rest > 0) return this.arm(id, p, rest);
    p.ready = true;
    this.ready.push(id);
    this.pump();
  }

  /** Starts ready backups up to [backup] concurrency; a device already being backed up waits for that to finish. */
  private pump(): void {
    const limit = this.deps.config.backup.concurrency;
    for (let i = 0; i < this.ready.length && this.running.size < limit;) {
      const id = this.ready[i];
      if (this.running.has(id)) {
        i++;
        continue;
      }
      if (this.deps.runner.isRunning(id)) {
        // Backed up by someone else right now (schedule, "Back up now"): nothing tells us when that ends, so look again.
        this.pumpLater();
        i++;
        continue;
      }
      this.ready.splice(i, 1);
      const p = this.pending.get(id);
      this.pending.delete(id);
      if (!p) continue;
      this.startBackup(id, p);
    }
  }

  private pumpLater(): void {
    if (this.retry || this.stopped) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      this.pump();
    }, 500);
    this.retry.unref();
  }

  private startBackup(id: number, p: Pending): void {
    // A device of a remote zone: queued for its collector, or (leased right now, the change may come after what the
    // collector reads) looked at again; never handed to the runner, whose "skipped, queued" would requeue it forever.
    const zoned = queueZonedEventBackup(this.deps.db, id);
    if (zoned === 'leased') return this.requeue(id, p);
    this.counters.backups_started++;
    if (zoned === 'queued') return;
    const changedBy = p.users.length ? p.users.join(', ').slice(0, 128) : null;
    const run = this.deps.runner
      .backupDevice(id, { trigger: 'event', changedBy })
      .then((r) => {
        // Another backup of the device (the schedule, "Back up now") was running: this change still needs one.
        if (r.failure === 'SKIPPED' && !this.stopped && eventDeviceEnabled(this.deps.db, id)) this.requeue(id, p);
      })
      .catch((err: unknown) => this.deps.log?.error({ err, device_id: id }, 'event backup failed to start'))
      .finally(() => {
        this.running.delete(id);
        if (!this.stopped) this.pump();
      });
    this.running.set(id, run);
  }

  private requeue(id: number, p: Pending): void {
    const now = this.pending.get(id);
    if (now) {
      for (const u of p.users) if (!now.users.includes(u) && now.users.length < MAX_USERS) now.users.push(u);
      return;
    }
    const again: Pending = { last: Date.now(), users: p.users, timer: null, ready: false };
    this.pending.set(id, again);
    this.arm(id, again, Math.max(1000, this.debounceMs));
  }

  /** Called by the receiver's timer: one line per minute when unknown senders were seen, never per message. */
  logUnknown(): void {
    if (this.unknownSinceLog === 0) return;
    this.deps.log?.info({ messages: this.unknownSinceLog, total: this.counters.unknown_senders }, 'syslog messages from unknown senders ignored');
    this.unknownSinceLog = 0;
  }
}

function push(map: Map<string, number[]>, key: string, id: number): void {
  const list = map.get(key);
  if (!list) map.set(key, [id]);
  else if (!list.includes(id)) list.push(id);
}
