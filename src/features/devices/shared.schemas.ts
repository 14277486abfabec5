// Field schemas shared by the device and group APIs: names, descriptions, cron schedules, ids, query filters.
import { z } from '@hono/zod-openapi';
import { Cron } from 'croner';
import { descriptionSchema, nameSchema, textSchema } from '../../lib/names';
import { MAX_ID, queryBoolean } from '../../http/openapi';

export const TimestampSchema = z.string().openapi({
  description: '`YYYY-MM-DD HH:MM:SS` in the request time zone (X-Timezone header, else the key owner’s preference, else the appliance’s)',
  example: '2024-05-01 02:00:13',
});

export const NameSchema = nameSchema('name', 128);

export const DescriptionSchema = descriptionSchema('description', 2000);

/** Id of another record given in a body (1 to 2^53-1); whether it exists is checked by the service (422 naming the field). */
export const RefIdSchema = z.number().int().min(1).max(MAX_ID, 'must be at most 2^53-1');

/**
 * Why a schedule is unusable, or null. A bare date string is refused although croner would take it as a
 * one-off run: a schedule must repeat. A pattern that never fires (31 February) is refused too.
 */
export function scheduleProblem(expr: string): string | null {
  if (!/^@\w+$/.test(expr) && !/\s/.test(expr)) return 'must be a cron expression (5 to 7 fields) or a nickname such as @daily';
  try {
    const cron = new Cron(expr, { paused: true });
    const next = cron.nextRun();
    cron.stop();
    return next ? null : 'never fires';
  } catch (err) {
    return `invalid cron expression: ${(err as Error).message.replace(/^CronPattern: /, '')}`;
  }
}

export const ScheduleSchema = z
  .string()
  .trim()
  .min(1, 'must not be empty; use null for no override')
  .max(128, 'at most 128 characters')
  .superRefine((v, ctx) => {
    const problem = scheduleProblem(v);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .openapi({
    description:
      'Cron expression in the appliance time zone: five fields (minute hour day-of-month month weekday), or six with seconds first; ' +
      'ranges, lists and steps (`*/15`, `1-5`, `MON-FRI`), or a nickname such as `@daily` or `@hourly`. It must repeat (a bare ' +
      'date is refused) and must fire at least once (`0 0 31 2 *` is refused). At most 128 characters.',
    example: '0 3 * * *',
  });

/** An optional id query parameter: a positive integer (0 is a 422, as the minimum of 1 says) up to 2^53-1. */
export const IntQuery = (name: string) =>
  z
    .string()
    .regex(/^[1-9]\d{0,15}$/, `${name} must be a positive integer`)
    .transform(Number)
    .refine((n) => n <= MAX_ID, `${name} must be at most 2^53-1`)
    .optional()
    .openapi({ type: 'integer', minimum: 1, maximum: MAX_ID });

/** An optional boolean query parameter written `true`/`false`/`1`/`0`, any case. */
export const BoolQuery = queryBoolean;

export const SearchQuery = textSchema(0, 128).optional();
