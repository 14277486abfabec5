// The collectors' internal protocol, /collector/v1 (outside the public API): enrolment with a one-time token, signed lease and batched upload.
import { Hono, type Context } from 'hono';
import { z } from 'zod';
import { ApiError } from '../../errors';
import type { AppEnv, AppServices } from '../../http/context';
import { BATCH_RESULTS, HEADERS, LEASE_HOLD_MAX_MS, MAX_HELD, PROTOCOL_VERSION } from '../../lib/collector-protocol';
import { authenticateCollector, checkProtocol, enrolCollector, type CollectorRow } from './collectors.service';
import { leaseWorkHeld, storeUploads, type UploadInput } from './collector-work.service';
import { SOURCE_ENCODINGS } from '../../lib/decode';
import { registerCollectorEvents } from './collector-events.routes';

/** The largest upload accepted: a configuration text as large as the engine's own output limit, JSON-escaped. */
const MAX_BODY_BYTES = 80 * 1024 * 1024;

const EnrolBody = z.strictObject({
  token: z.string().min(1).max(200),
  name: z.string().min(1).max(64),
  signing_key: z.string().min(1).max(200),
  sealing_key: z.string().min(1).max(200),
  version: z.string().max(64),
});

/**
 * Protocol 2: `held` names the leases the collector still works on (renewed, so that a long job's lease does not run
 * out); `wait`: an idle collector's request is held until work is queued (at most poll_seconds and LEASE_HOLD_MAX_MS);
 * `release` (with `max` 0): a stopping collector gives back the leases it had not started, queued again at once.
 */
const LeaseBody = z.strictObject({
  max: z.number().int().min(0).max(100),
  held: z.array(z.uuid()).max(MAX_HELD).default([]),
  release: z.array(z.uuid()).max(MAX_HELD).default([]),
  wait: z.boolean().default(false),
});

/** What every result names: its lease, when and how long, and what the device showed of itself. */
const UploadCommon = {
  lease_id: z.uuid(),
  started_at: z.number().int(),
  duration_ms: z.number().int().min(0),
  host_key: z.string().max(200).nullable(),
  reachability: z.enum(['reachable', 'unreachable']).nullable(),
};

const UploadBody = z.union([
  z.strictObject({
    ...UploadCommon,
    ok: z.literal(true),
    text: z.string(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    encoding: z.enum(SOURCE_ENCODINGS).nullable(),
  }),
  z.strictObject({ ...UploadCommon, ok: z.literal(false), failure: z.string().max(64), message: z.string().max(4000) }),
]);

/** Protocol 2: up to BATCH_RESULTS results per request, each checked on its own (one bad result refuses only itself). */
const ResultsBody = z.strictObject({ results: z.array(z.unknown()).min(1).max(BATCH_RESULTS) });

function parseResult(value: unknown): UploadInput | { lease_id: string; invalid: string } {
  const r = UploadBody.safeParse(value);
  if (r.success) return r.data;
  const leaseId = (value as { lease_id?: unknown } | null)?.lease_id;
  const problems = r.error.issues.map((i) => `${i.path.join('.') || 'result'}: ${i.message}`).join('; ');
  return { lease_id: typeof leaseId === 'string' ? leaseId.slice(0, 64) : '', invalid: `Result validation failed: ${problems}`.slice(0, 1000) };
}

async function readBody(c: Context<AppEnv>): Promise<Buffer> {
  const length = Number(c.req.header('content-length') ?? 0);
  if (length > MAX_BODY_BYTES) throw new ApiError('PAYLOAD_TOO_LARGE', 'Collector upload too large.');
  const body = Buffer.from(await c.req.arrayBuffer());
  if (body.length > MAX_BODY_BYTES) throw new ApiError('PAYLOAD_TOO_LARGE', 'Collector upload too large.');
  return body;
}

function parseJson<T>(schema: z.ZodType<T>, body: Buffer): T {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw ApiError.validation([{ field: 'body', message: 'malformed JSON' }], 'Request body is not valid JSON');
  }
  const r = schema.safeParse(value);
  if (!r.success) throw ApiError.validation(r.error.issues.map((i) => ({ field: i.path.join('.') || 'body', message: i.message })));
  return r.data;
}

/** The collector that signed this request (ApiError otherwise), with the body it signed. */
async function signed(app: AppServices, c: Context<AppEnv>): Promise<{ collector: CollectorRow; body: Buffer }> {
  const body = await readBody(c);
  const url = new URL(c.req.url);
  const collector = authenticateCollector(app.db, { method: c.req.method, path: url.pathname + url.search, header: (n) => c.req.header(n), body });
  return { collector, body };
}

/** Mounted at PROTOCOL_PREFIX by the composition root. Every answer names the central's protocol version. */
export function createCollectorRoutes(app: AppServices): Hono<AppEnv> {
  const r = new Hono<AppEnv>();
  r.use('*', async (c, next) => {
    await next();
    c.header(HEADERS.protocol, String(PROTOCOL_VERSION));
    c.header('Cache-Control', 'no-store');
  });

  r.post('/enrol', async (c) => {
    checkProtocol(c.req.header(HEADERS.protocol));
    const input = parseJson(EnrolBody, await readBody(c));
    return c.json(enrolCollector(app.db, input), 201);
  });

  r.post('/lease', async (c) => {
    const { collector, body } = await signed(app, c);
    const { max, held, release, wait } = parseJson(LeaseBody, body);
    const cfg = app.config.collector;
    const jobs = await leaseWorkHeld(app.db, app.secrets, collector, {
      max,
      held,
      release,
      leaseMs: cfg.lease_seconds * 1000,
      redact: app.config.backup.redact_secrets,
      holdMs: wait && max > 0 ? Math.min(cfg.poll_seconds * 1000, LEASE_HOLD_MAX_MS) : 0,
      signal: c.req.raw.signal,
    });
    return c.json({ jobs, poll_seconds: cfg.poll_seconds });
  });

  r.post('/results', async (c) => {
    const { collector, body } = await signed(app, c);
    const { results } = parseJson(ResultsBody, body);
    return c.json({ results: await storeUploads(app.db, app.snapshots, collector, results.map(parseResult)) });
  });

  // Syslog change events forwarded by collectors (collector-events.routes.ts), signed like every request here.
  registerCollectorEvents(r, app, async (c, schema) => {
    const { collector, body } = await signed(app, c);
    return { collector, input: parseJson(schema, body) };
  });
  return r;
}
