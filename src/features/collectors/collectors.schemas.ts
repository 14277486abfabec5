// Schemas of the public API's collector list (docs/collectors.md): one shape, the type derived from it.
import { z } from '@hono/zod-openapi';

export const CollectorSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    zone: z.string(),
    version: z.string().nullable(),
    enrolled_at: z.string(),
    last_seen_at: z.string().nullable(),
    state: z.enum(['online', 'offline', 'revoked']).openapi({ description: 'offline: not seen for `[collector] offline_after` seconds' }),
    queued: z.number().int().openapi({ description: "Backups of the collector's zone waiting for a collector" }),
    leased: z.number().int().openapi({ description: "Backups of the collector's zone leased to one of its collectors" }),
    stored_last_hour: z.number().int().openapi({ description: 'Results this collector delivered in the last hour' }),
    stored_total: z.number().int(),
  })
  .openapi('Collector');

export const CollectorListSchema = z.object({ items: z.array(CollectorSchema) }).openapi('CollectorList');
