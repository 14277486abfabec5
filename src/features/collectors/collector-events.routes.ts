// POST /collector/v1/events: syslog messages a collector received at its site, matched by the central for devices of its zone only.
import { isIP } from 'node:net';
import type { Context, Hono } from 'hono';
import { z } from 'zod';
import { ApiError } from '../../errors';
import type { AppEnv, AppServices } from '../../http/context';
import { EVENTS_MAX_BATCH, EVENTS_MAX_MESSAGE } from '../../lib/collector-protocol';
import type { CollectorRow } from './collectors.service';

const EventsBody = z.strictObject({
  events: z
    .array(
      z.strictObject({
        /** The sender's address as the collector saw it. */
        address: z
          .string()
          .max(64)
          .refine((a) => isIP(a) !== 0, 'expected an IP address'),
        /** When the collector received it (ms). */
        at: z.number().int().min(0),
        raw: z.string().max(EVENTS_MAX_MESSAGE),
      }),
    )
    .min(1)
    .max(EVENTS_MAX_BATCH),
});

/** The collector's signed request checked and its body parsed (collectors.routes.ts owns the signature check). */
export type SignedJson = <T>(c: Context<AppEnv>, schema: z.ZodType<T>) => Promise<{ collector: CollectorRow; input: T }>;

export function registerCollectorEvents(r: Hono<AppEnv>, app: AppServices, signedJson: SignedJson): void {
  r.post('/events', async (c) => {
    const { collector, input } = await signedJson(c, EventsBody);
    const sink = app.collectorEvents;
    if (!sink) throw new ApiError('SERVICE_UNAVAILABLE', 'This central does not take syslog events yet; retry later.');
    return c.json(
      await sink.accept(
        collector.zone,
        input.events.map((e) => ({ address: e.address, raw: e.raw })),
      ),
    );
  });
}
