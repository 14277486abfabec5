// The delivery worker of `serve`: builds one message (or digest) per channel per interval from the outbox, sends with retries, and checks for stale devices.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/config';
import type { DB } from '../../db/open';
import type { SecretBox } from '../../identity/secrets';
import type { SnapshotStore } from '../../store/snapshots';
import { getTemplateSpec } from '../templates/templates.service';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { NOTIFICATION_OPS } from './notifications.policy';
import { recordAudit } from '../audit/audit.service';
import { enqueueStale } from './notification-events.service';
import { channelSecrets, findChannel } from './notifications.service';
import { failureClass } from './notifications.failures';
import { destinationPolicy } from './notifications.service';
import { sendMessage, type Channel } from './notifications.send';
import {
  assignOutbox,
  channelsWithWaitingEvents,
  dueDeliveries,
  getDeliveryRow,
  getChannelRow,
  insertDelivery,
  isStaleNoticed,
  lastSuccessAt,
  pendingDeliveryOf,
  pruneDeliveries,
  putStaleNotice,
  setChannelLastSent,
  staleDeviceIds,
  updateDeliveryAttempt,
  waitingOutbox,
  type DeliveryRow,
  type OutboxRow,
} from './notifications.store';
import type { ChannelSettings, EventItem, OutboxDiffRef, Payload } from './notifications.types';
import { DIFF_DID_NOT_FIT, DIGEST_DIFF_DEADLINE_MS, type DiffOutcome, type DiffRequest, type NotificationDiffRunner } from './notification-diffs';

const MAX_EVENTS_PER_MESSAGE = 500;
const CONCURRENCY = 4;
const BACKOFF_BASE_MS = 5_000;
const BACKOFF_MAX_MS = 3_600_000;
/** Sent and dead deliveries (and their events) are kept this long in the delivery log. */
export const DELIVERY_LOG_DAYS = 30;

export interface WorkerDeps {
  db: DB;
  secrets: SecretBox;
  snapshots: SnapshotStore;
  config: Readonly<AppConfig>;
  /** Where the diffs of a message are computed: a pool worker (src/features/configs/workers/notification-diffs.ts). */
  diffs: NotificationDiffRunner;
  log?: Logger | null;
}

/** What sending alone needs (a test message, a retry): no diffs are made. */
export type SendDeps = Omit<WorkerDeps, 'diffs'>;

/** Delay before attempt n+1 after n failed attempts: 5 s, 10 s, 20 s ... capped at an hour. */
export function backoffMs(attempts: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1));
}

function digestSummary(items: EventItem[]): string {
  const counts = new Map<string, number>();
  for (const i of items) counts.set(i.event, (counts.get(i.event) ?? 0) + 1);
  return `${items.length} events: ${[...counts].map(([e, n]) => `${n} ${e}`).join(', ')}`;
}

/** The outbox rows a channel's next message would take now, or null when it has none due (pending, interval). */
function dueOutbox(deps: WorkerDeps, channelId: number, now: number): OutboxRow[] | null {
  const { db } = deps;
  const ch = getChannelRow(db, channelId);
  if (!ch || pendingDeliveryOf(db, channelId)) return null;
  if (ch.last_sent_at !== null && now < ch.last_sent_at + deps.config.notifications.min_interval_seconds * 1000) return null;
  const rows = waitingOutbox(db, channelId, MAX_EVENTS_PER_MESSAGE);
  return rows.length ? rows : null;
}

/**
 * The redacted diffs the rows ask for, by outbox row id: computed on a pool worker, all of them under one deadline
 * (DIGEST_DIFF_DEADLINE_MS), so a digest of large changes never holds the event loop. When the worker itself runs
 * out of time, each event says its diff did not fit.
 */
async function diffsOf(deps: WorkerDeps, rows: OutboxRow[]): Promise<Map<number, DiffOutcome>> {
  const wanted: { id: number; request: DiffRequest }[] = [];
  for (const r of rows) {
    const stored = JSON.parse(r.item) as { item: EventItem; diff: OutboxDiffRef | null };
    if (!r.include_diff || !stored.diff?.snapshot) continue;
    const template = stored.diff.template_id === null ? undefined : getTemplateSpec(deps.db, stored.diff.template_id);
    wanted.push({
      id: r.id,
      request: {
        device_name: stored.item.device?.name ?? 'device',
        snapshot: stored.diff.snapshot,
        previous_snapshot: stored.diff.previous_snapshot,
        redact_patterns: template?.redact_patterns ?? [],
      },
    });
  }
  const out = new Map<number, DiffOutcome>();
  if (!wanted.length) return out;
  const task = {
    diffs: wanted.map((w) => w.request),
    redaction_key: deps.secrets.redactionKey.toString('hex'),
    deadline_at: Date.now() + DIGEST_DIFF_DEADLINE_MS,
    snapshotsRoot: deps.snapshots.root,
  };
  let results: DiffOutcome[];
  try {
    results = await deps.diffs(task, DIGEST_DIFF_DEADLINE_MS + 5_000);
  } catch (e) {
    deps.log?.warn({ err: e }, 'notification diffs did not finish');
    results = wanted.map(() => ({ diff: DIFF_DID_NOT_FIT, truncated: true }));
  }
  wanted.forEach((w, i) => out.set(w.id, results[i] ?? { diff: DIFF_DID_NOT_FIT, truncated: true }));
  return out;
}

/**
 * Build the next message of a channel from its waiting outbox rows: the diffs first (off the event loop), then one
 * transaction that checks the channel is still due and takes the rows the diffs were made for (events that arrived
 * meanwhile wait for the next message). Null when there is none to build.
 */
export async function buildDelivery(deps: WorkerDeps, channelId: number, now = Date.now()): Promise<string | null> {
  const { db } = deps;
  const due = dueOutbox(deps, channelId, now);
  if (!due) return null;
  const diffs = await diffsOf(deps, due);
  const taken = new Set(due.map((r) => r.id));
  return db
    .transaction(() => {
      const rows = (dueOutbox(deps, channelId, now) ?? []).filter((r) => taken.has(r.id));
      if (!rows.length) return null;
      const items = rows.map((r) => {
        const it = (JSON.parse(r.item) as { item: EventItem }).item;
        const d = diffs.get(r.id);
        if (d) {
          it.diff = d.diff;
          if (d.truncated) it.diff_truncated = true;
        }
        return it;
      });
      const id = randomUUID();
      const payload: Payload =
        items.length === 1
          ? { ...items[0], delivery_id: id }
          : { event: 'digest', delivery_id: id, occurred_at: new Date(now).toISOString(), summary: digestSummary(items), events: items };
      insertDelivery(db, {
        id,
        channel_id: channelId,
        status: 'pending',
        next_attempt_at: now,
        event_count: items.length,
        body: JSON.stringify(payload),
        created_at: now,
      });
      assignOutbox(
        db,
        rows.map((r) => r.id),
        id,
      );
      setChannelLastSent(db, channelId, now);
      return id;
    })
    .immediate();
}

/** Try one delivery once and record the outcome (sent; retry later with backoff; dead after max_attempts). */
export async function attemptDelivery(deps: SendDeps, d: DeliveryRow, maxAttempts = deps.config.notifications.max_attempts): Promise<string | null> {
  const { db } = deps;
  const row = getChannelRow(db, d.channel_id);
  if (!row) return 'channel removed';
  const attempts = d.attempts + 1;
  let error: string | null = null;
  try {
    const ch: Channel = { name: row.name, type: row.type, settings: JSON.parse(row.settings) as ChannelSettings, secrets: channelSecrets(deps.secrets, row) };
    await sendMessage(ch, JSON.parse(d.body) as Payload, destinationPolicy(deps.config));
  } catch (e) {
    error = failureClass(e);
  }
  const now = Date.now();
  if (error === null) {
    updateDeliveryAttempt(db, d.id, { status: 'sent', attempts, next_attempt_at: now, last_error: null, sent_at: now });
    return null;
  }
  const dead = attempts >= maxAttempts;
  updateDeliveryAttempt(db, d.id, {
    status: dead ? 'dead' : 'pending',
    attempts,
    next_attempt_at: now + backoffMs(attempts),
    last_error: error,
    sent_at: null,
  });
  deps.log?.warn({ delivery_id: d.id, channel: row.name, attempts, dead, error }, 'notification delivery failed');
  return error;
}

/** Announce devices with no successful backup for stale_after_hours (once per episode). Returns how many became stale. */
export function checkStaleDevices(db: DB, hours: number, now = Date.now()): number {
  return db
    .transaction(() => {
      let n = 0;
      for (const id of staleDeviceIds(db, now - hours * 3_600_000)) {
        if (isStaleNoticed(db, id)) continue;
        putStaleNotice(db, id, now);
        enqueueStale(db, id, lastSuccessAt(db, id), hours, now);
        n++;
      }
      return n;
    })
    .immediate();
}

export class NotificationWorker {
  private timer: NodeJS.Timeout | null = null;
  private staleTimer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Map<string, Promise<string | null>>();
  private readonly building = new Map<number, Promise<void>>();
  private sending = false;

  constructor(
    private readonly deps: WorkerDeps,
    private readonly tickMs = 1000,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.tick(), this.tickMs);
    this.timer.unref();
    const stale = () => {
      try {
        checkStaleDevices(this.deps.db, this.deps.config.backup.stale_after_hours);
        pruneDeliveries(this.deps.db, Date.now() - DELIVERY_LOG_DAYS * 86_400_000);
      } catch (e) {
        this.deps.log?.error({ err: e }, 'stale check or delivery-log pruning failed');
      }
    };
    stale();
    this.staleTimer = setInterval(stale, 5 * 60_000);
    this.staleTimer.unref();
  }

  /**
   * One pass: start building what is due (each channel's build awaits its diffs on a pool worker, then sends at
   * once), and start due deliveries up to the concurrency bound. Nothing is awaited here.
   */
  tick(now = Date.now()): void {
    try {
      for (const ch of channelsWithWaitingEvents(this.deps.db)) {
        if (this.building.has(ch)) continue;
        const p = buildDelivery(this.deps, ch, now)
          .then(() => this.sendDue(now))
          .catch((e: unknown) => this.deps.log?.error({ err: e }, 'building a notification failed'))
          .finally(() => this.building.delete(ch));
        this.building.set(ch, p);
      }
      this.sendDue(now);
    } catch (e) {
      this.deps.log?.error({ err: e }, 'notification worker pass failed');
    }
  }

  /** Start the deliveries that are due, up to the concurrency bound (never awaited here). */
  private sendDue(now: number): void {
    if (this.sending) return;
    this.sending = true;
    try {
      const free = CONCURRENCY - this.inFlight.size;
      if (free <= 0) return;
      for (const d of dueDeliveries(this.deps.db, now, free + this.inFlight.size)) {
        if (this.inFlight.has(d.id) || this.inFlight.size >= CONCURRENCY) continue;
        const p = attemptDelivery(this.deps, d).finally(() => this.inFlight.delete(d.id));
        this.inFlight.set(d.id, p);
      }
    } finally {
      this.sending = false;
    }
  }

  /** Wait for the builds under way (tests, and stop). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.building.values()]);
  }

  /** Stop the timers and wait (bounded) for sends in flight; an unfinished one is retried after the next start. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.staleTimer) clearInterval(this.staleTimer);
    await Promise.race([Promise.allSettled([...this.inFlight.values(), ...this.building.values()]), new Promise((r) => setTimeout(r, 5000).unref())]);
  }
}

/** "Send test": one test message to a channel now, recorded in its delivery log; the error when it was not taken. */
export async function sendTestMessage(deps: SendDeps, actor: Actor, name: string): Promise<{ delivery_id: string; error: string | null }> {
  authorize(actor, NOTIFICATION_OPS.testChannel);
  const { db } = deps;
  const id = randomUUID();
  const now = Date.now();
  const delivery = db
    .transaction(() => {
      const ch = findChannel(db, name);
      const payload: Payload = {
        event: 'test',
        delivery_id: id,
        occurred_at: new Date(now).toISOString(),
        device: null,
        backup: null,
        summary: `Test message from confvault to channel ${ch.name}.`,
      };
      insertDelivery(db, { id, channel_id: ch.id, status: 'pending', next_attempt_at: now, event_count: 1, body: JSON.stringify(payload), created_at: now });
      recordAudit(db, actor, { action: 'notification_channel.test', target: `notification channel ${ch.name}`, details: { delivery_id: id } });
      return getDeliveryRow(db, id) as DeliveryRow;
    })
    .immediate();
  // One attempt only: a failed test is shown as dead at once rather than retried behind the user's back.
  return { delivery_id: id, error: await attemptDelivery(deps, delivery, 1) };
}

/** The worker of `serve`: one pass a second. */
export function startNotificationWorker(deps: WorkerDeps): NotificationWorker {
  const w = new NotificationWorker(deps, 1000);
  w.start();
  return w;
}
