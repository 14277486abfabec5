// The delivery worker of `serve`: builds one message (or digest) per channel per interval from the outbox, sends with retries, and checks for stale devices.
import { randomUUID } from 'node:crypto';
import { createTwoFilesPatch } from 'diff';
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/config';
import type { DB } from '../../db/open';
import { redactLines, type RedactionKey } from '../../templates/redact';
import type { SecretBox } from '../../identity/secrets';
import type { SnapshotStore } from '../../store/snapshots';
import { getTemplateSpec } from '../templates/templates.service';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
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
} from './notifications.store';
import type { ChannelSettings, EventItem, OutboxDiffRef, Payload } from './notifications.types';

/** Largest diff carried by one event, in characters; the rest is cut and marked. */
export const MAX_DIFF_CHARS = 64 * 1024;
/** Largest text compared for a diff: bigger configurations get a note instead (the diff runs on the event loop). */
const MAX_DIFF_INPUT = 1024 * 1024;
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
  log?: Logger | null;
}

/** Delay before attempt n+1 after n failed attempts: 5 s, 10 s, 20 s ... capped at an hour. */
export function backoffMs(attempts: number): number {
  return Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1));
}

/**
 * The diff between two stored snapshots, each redacted with the template's redact rules and the appliance's
 * redaction key, capped in size. A diff leaves the appliance, so it is redacted even when the stored versions are
 * not (`redact_secrets = false` or a template with `redact: false`); secrets already stored as tokens stay as they are.
 */
export function redactedDiff(
  db: DB,
  snapshots: SnapshotStore,
  key: RedactionKey,
  ref: OutboxDiffRef,
  deviceName: string,
): { diff: string; truncated: boolean } | null {
  if (!ref.snapshot) return null;
  const template = ref.template_id === null ? undefined : getTemplateSpec(db, ref.template_id);
  const read = (hash: string | null) => {
    if (!hash) return '';
    try {
      return snapshots.read(hash) ?? '';
    } catch {
      return '';
    }
  };
  const after = read(ref.snapshot);
  const before = read(ref.previous_snapshot);
  if (after.length + before.length > MAX_DIFF_INPUT) return { diff: '(configuration too large for an inline diff)', truncated: true };
  const redact = (t: string) => redactLines(t.split('\n'), template?.redact_patterns ?? [], key).join('\n');
  // Bounded like the web diff: a change too large to compute quickly gets a note, never a stalled event loop.
  const patch = createTwoFilesPatch(`${deviceName} (before)`, `${deviceName} (after)`, redact(before), redact(after), '', '', {
    context: 3,
    maxEditLength: 4_000,
    timeout: 500,
  });
  if (patch === undefined) return { diff: '(change too large for an inline diff)', truncated: true };
  const body = patch.split('\n').slice(2).join('\n');
  return body.length > MAX_DIFF_CHARS ? { diff: body.slice(0, MAX_DIFF_CHARS), truncated: true } : { diff: body, truncated: false };
}

function digestSummary(items: EventItem[]): string {
  const counts = new Map<string, number>();
  for (const i of items) counts.set(i.event, (counts.get(i.event) ?? 0) + 1);
  return `${items.length} events: ${[...counts].map(([e, n]) => `${n} ${e}`).join(', ')}`;
}

/** Build the next message of a channel from its waiting outbox rows, in one transaction; null when there is none to build. */
export function buildDelivery(deps: WorkerDeps, channelId: number, now = Date.now()): string | null {
  const { db } = deps;
  const interval = deps.config.notifications.min_interval_seconds * 1000;
  return db
    .transaction(() => {
      const ch = getChannelRow(db, channelId);
      if (!ch || pendingDeliveryOf(db, channelId)) return null;
      if (ch.last_sent_at !== null && now < ch.last_sent_at + interval) return null;
      const rows = waitingOutbox(db, channelId, MAX_EVENTS_PER_MESSAGE);
      if (!rows.length) return null;
      const items = rows.map((r) => {
        const stored = JSON.parse(r.item) as { item: EventItem; diff: OutboxDiffRef | null };
        const it = stored.item;
        if (r.include_diff && stored.diff) {
          const d = redactedDiff(db, deps.snapshots, deps.secrets.redactionKey, stored.diff, it.device?.name ?? 'device');
          if (d) {
            it.diff = d.diff;
            if (d.truncated) it.diff_truncated = true;
          }
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
export async function attemptDelivery(deps: WorkerDeps, d: DeliveryRow, maxAttempts = deps.config.notifications.max_attempts): Promise<string | null> {
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
  private ticking = false;

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

  /** One pass: build what is due, start due deliveries up to the concurrency bound (never awaited here). */
  tick(now = Date.now()): void {
    if (this.ticking) return;
    this.ticking = true;
    try {
      for (const ch of channelsWithWaitingEvents(this.deps.db)) buildDelivery(this.deps, ch, now);
      const free = CONCURRENCY - this.inFlight.size;
      if (free <= 0) return;
      for (const d of dueDeliveries(this.deps.db, now, free + this.inFlight.size)) {
        if (this.inFlight.has(d.id) || this.inFlight.size >= CONCURRENCY) continue;
        const p = attemptDelivery(this.deps, d).finally(() => this.inFlight.delete(d.id));
        this.inFlight.set(d.id, p);
      }
    } catch (e) {
      this.deps.log?.error({ err: e }, 'notification worker pass failed');
    } finally {
      this.ticking = false;
    }
  }

  /** Stop the timers and wait (bounded) for sends in flight; an unfinished one is retried after the next start. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.staleTimer) clearInterval(this.staleTimer);
    await Promise.race([Promise.allSettled([...this.inFlight.values()]), new Promise((r) => setTimeout(r, 5000).unref())]);
  }
}

/** "Send test": one test message to a channel now, recorded in its delivery log; the error when it was not taken. */
export async function sendTestMessage(deps: WorkerDeps, actor: Actor, name: string): Promise<{ delivery_id: string; error: string | null }> {
  authorize(actor, 'settings.update');
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
