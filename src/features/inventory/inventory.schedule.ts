// Scheduled syncs inside `serve`: each source with interval_minutes is synced when due, one sync at a time, as the schedule.
import type { Logger } from 'pino';
import type { AppConfig } from '../../config/config';
import type { DB } from '../../db/open';
import type { SecretBox } from '../../identity/secrets';
import { DestinationPolicy } from '../../lib/destinations';
import { runSync } from './inventory-sync.service';
import { dueSourceIds, getSourceRow } from './inventory.store';

/** How often the due sources are looked for; a source's own interval is at least 5 minutes. */
const CHECK_MS = 60_000;

export interface InventoryScheduleContext {
  db: DB;
  secrets: SecretBox;
  config: Readonly<AppConfig>;
  log: Logger;
}

/** Sync every due source, one after the other; a failure is logged (and recorded on the source) and the next goes on. */
export async function syncDueSources(ctx: InventoryScheduleContext, now = Date.now()): Promise<number> {
  const policy = new DestinationPolicy(ctx.config.notifications.allowed_destinations);
  let done = 0;
  for (const id of dueSourceIds(ctx.db, now)) {
    const row = getSourceRow(ctx.db, id);
    if (!row) continue;
    try {
      const plan = await runSync(ctx.db, ctx.secrets, policy, row, 'schedule', false);
      ctx.log.info(
        { source: row.name, created: plan.creates.length, updated: plan.updates.length, retired: plan.retirements.length, skipped: plan.skipped.length },
        'inventory source synced',
      );
      done++;
    } catch (err) {
      ctx.log.warn({ source: row.name, err: (err as Error).message }, 'inventory source sync failed');
    }
  }
  return done;
}

/** The timer of `serve`: one round at a time; stop() waits for a round under way. */
export function startInventorySchedule(ctx: InventoryScheduleContext): { stop(): Promise<void> } {
  let round: Promise<unknown> | null = null;
  const tick = () => {
    round ??= syncDueSources(ctx)
      .catch((err: unknown) => ctx.log.error({ err }, 'inventory schedule: round failed'))
      .finally(() => (round = null));
  };
  const timer = setInterval(tick, CHECK_MS);
  timer.unref();
  tick();
  return {
    async stop() {
      clearInterval(timer);
      await round;
    },
  };
}
