// Remote collectors, the central's side: one-time enrolment tokens, enrolment (keys pinned), signed-request checks, revocation, zones.
import { createHash, randomBytes } from 'node:crypto';
import { withEngineSync, type DB } from '../../db/open';
import { ApiError } from '../../errors';
import { SYSTEM_ACTOR, type Actor } from '../../identity/actor';
import { authorize, requireScopeAll } from '../../identity/policy';
import type { Principal } from '../../identity/principal';
import { COLLECTOR_OPS } from './collectors.policy';
import { HEADERS, PROTOCOL_VERSION, REPLAY_WINDOW_MS, canonicalRequest, parsePublicKey, verifyRequest } from '../../lib/collector-protocol';
import { recordAudit } from '../audit/audit.service';
import { ZONE_PATTERN, ZONE_RULE } from './collectors.schemas';
import {
  effectiveZoneRows,
  getCollectorByName,
  getCollectorRow,
  getDeviceIdByName,
  getDeviceZoneRow,
  getGroupZoneRow,
  countTokenRows,
  deleteUnusedTokenRow,
  getToken,
  getTokenByPrefix,
  insertCollector,
  listTokenRows,
  insertToken,
  listCollectorRows,
  recentResultCountRows,
  rememberNonce,
  revokeCollectorRow,
  setCollectorZoneRow,
  setDeviceZoneRow,
  setGroupZoneRow,
  touchCollector,
  useToken,
  workCountRows,
  type CollectorRow,
  type TokenRow,
} from './collectors.store';

export type { CollectorRow } from './collectors.store';

const TOKEN_PREFIX = 'cvc_';
/** A collector's last contact is written at most this often (and on its first request and a version change). */
const TOUCH_EVERY_MS = 2_000;

/** A change to collectors or zones: the operation's permission (collectors.policy), and scope "all" (a zone spans groups). */
function requireManage(actor: Actor, op: (typeof COLLECTOR_OPS)[keyof typeof COLLECTOR_OPS]): void {
  authorize(actor, op);
  requireScopeAll(actor, 'Collectors serve devices of every group: managing them needs the device-group scope all');
}

function checkZone(zone: string): string {
  if (!ZONE_PATTERN.test(zone)) throw ApiError.validation([{ field: 'zone', message: ZONE_RULE }], `invalid zone "${zone}"`);
  return zone;
}

export const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');
/** A token's public id: the first 16 hex digits of its hash (the token cannot be recovered from it). */
export const tokenId = (hash: string) => hash.slice(0, 16);

/** A one-time enrolment token for a collector of `zone`, valid `hours`; only its hash is stored. */
export function createEnrolToken(db: DB, actor: Actor, zone: string, hours = 24, at = Date.now()): { id: string; token: string; expires_at: number } {
  requireManage(actor, COLLECTOR_OPS.createToken);
  checkZone(zone);
  if (!(hours > 0 && hours <= 24 * 30)) throw ApiError.validation([{ field: 'hours', message: 'between 1 and 720' }], 'invalid token lifetime');
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const token_hash = hashToken(token);
  const expires_at = at + Math.round(hours * 3_600_000);
  db.transaction(() => {
    insertToken(db, { token_hash, zone, created_by: actor.principal.username, created_at: at, expires_at });
    recordAudit(db, actor, { action: 'collector.token_create', target: `zone ${zone}`, details: { zone, expires_at, token_id: tokenId(token_hash) } }, at);
  }).immediate();
  return { id: tokenId(token_hash), token, expires_at };
}

/** A token as lists show it: its row without the hash, named by its public id (tokenId). The token itself is never stored. */
export type EnrolTokenView = Omit<TokenRow, 'token_hash'> & { id: string; state: 'valid' | 'used' | 'expired' };

/** One page of enrolment tokens, newest first, without their secret, and the total. */
export function listEnrolTokens(db: DB, actor: Actor, page: number, limit: number, at = Date.now()): { items: EnrolTokenView[]; total: number } {
  requireManage(actor, COLLECTOR_OPS.listTokens);
  return db.transaction(() => {
    const total = countTokenRows(db);
    const offset = (page - 1) * limit;
    const rows = offset < total ? listTokenRows(db, offset, limit) : [];
    const items = rows.map(({ token_hash, ...t }): EnrolTokenView => ({
      id: tokenId(token_hash),
      ...t,
      state: t.used_at !== null ? 'used' : t.expires_at <= at ? 'expired' : 'valid',
    }));
    return { items, total };
  })();
}

/** Revokes an enrolment token not used yet (it is deleted: it can enrol nothing). A used one: revoke its collector instead (409). */
export function revokeEnrolToken(db: DB, actor: Actor, id: string): void {
  requireManage(actor, COLLECTOR_OPS.revokeToken);
  db.transaction(() => {
    const t = /^[0-9a-f]{16}$/.test(id) ? getTokenByPrefix(db, id) : undefined;
    if (!t) throw ApiError.notFound(`enrolment token ${id}`);
    if (!deleteUnusedTokenRow(db, t.token_hash))
      throw new ApiError('CONFLICT', `Enrolment token ${id} enrolled collector ${t.collector_id ?? '(deleted)'} already: revoke that collector instead.`, {
        collector_id: t.collector_id,
      });
    recordAudit(db, actor, { action: 'collector.token_revoke', target: `zone ${t.zone}`, details: { zone: t.zone, token_id: id } });
  }).immediate();
}

export interface EnrolInput {
  token: string;
  name: string;
  signing_key: string;
  sealing_key: string;
  version: string;
}

/** Enrols a collector with a one-time token: its public keys are pinned, the token is used up. */
export function enrolCollector(db: DB, input: EnrolInput, at = Date.now()): { collector_id: number; zone: string } {
  if (!parsePublicKey(input.signing_key, 'ed25519')) throw ApiError.validation([{ field: 'signing_key', message: 'not an Ed25519 public key' }]);
  if (!parsePublicKey(input.sealing_key, 'x25519')) throw ApiError.validation([{ field: 'sealing_key', message: 'not an X25519 public key' }]);
  if (!ZONE_PATTERN.test(input.name)) throw ApiError.validation([{ field: 'name', message: ZONE_RULE }]);
  const hash = hashToken(input.token);
  return db
    .transaction(() => {
      const token = getToken(db, hash);
      if (!token || token.used_at !== null || token.expires_at <= at) throw new ApiError('UNAUTHORIZED', 'Enrolment token unknown, already used or expired.');
      if (getCollectorByName(db, input.name)) throw new ApiError('CONFLICT', `A collector named "${input.name}" is enrolled already.`);
      const id = insertCollector(db, {
        name: input.name,
        zone: token.zone,
        signing_key: input.signing_key,
        sealing_key: input.sealing_key,
        enrolled_at: at,
        version: input.version,
      });
      if (!useToken(db, hash, id, at)) throw new ApiError('UNAUTHORIZED', 'Enrolment token unknown, already used or expired.');
      recordAudit(
        db,
        SYSTEM_ACTOR,
        { action: 'collector.enrol', target: `collector ${id}`, details: { name: input.name, zone: token.zone, token_by: token.created_by } },
        at,
      );
      return { collector_id: id, zone: token.zone };
    })
    .immediate();
}

export interface SignedRequest {
  method: string;
  /** Path with its query, as the collector signed it. */
  path: string;
  header(name: string): string | undefined;
  body: Buffer;
}

/**
 * The collector that signed the request, or an ApiError: another protocol version (409, said in one line), an
 * unknown or revoked collector, a bad signature, a time outside the replay window or a nonce seen before (401).
 * Every accepted request counts as the collector being seen (written at most every TOUCH_EVERY_MS).
 */
export function authenticateCollector(db: DB, req: SignedRequest, at = Date.now()): CollectorRow {
  checkProtocol(req.header(HEADERS.protocol));
  const refuse = (why: string) => new ApiError('UNAUTHORIZED', `Collector request refused: ${why}.`);
  const id = Number(req.header(HEADERS.id));
  const timestamp = req.header(HEADERS.timestamp) ?? '';
  const nonce = req.header(HEADERS.nonce) ?? '';
  const signature = req.header(HEADERS.signature) ?? '';
  if (!Number.isSafeInteger(id) || !/^\d{1,15}$/.test(timestamp) || !/^[A-Za-z0-9_-]{16,64}$/.test(nonce) || !signature) throw refuse('not signed');
  const collector = getCollectorRow(db, id);
  if (!collector) throw refuse('unknown collector');
  if (collector.revoked_at !== null) throw refuse('the collector is revoked');
  if (Math.abs(at - Number(timestamp)) > REPLAY_WINDOW_MS) throw refuse('timestamp outside the replay window (check the clocks)');
  const key = parsePublicKey(collector.signing_key, 'ed25519');
  if (!key || !verifyRequest(key, canonicalRequest(req.method, req.path, timestamp, nonce, req.body), signature)) throw refuse('bad signature');
  // collectors-bench (#27): one commit, an engine record (no fsync on the event loop, db/open.ts). A central restart
  // keeps it (WAL), so a replay inside the window stays refused; last contact is written at most every few seconds.
  const version = req.header(HEADERS.version)?.slice(0, 64) ?? null;
  const fresh = withEngineSync(db, () =>
    db
      .transaction(() => {
        if (!rememberNonce(db, id, nonce, at, at - 2 * REPLAY_WINDOW_MS)) return false;
        const seen = collector.last_seen_at ?? 0;
        if (at - seen >= TOUCH_EVERY_MS || seen <= collector.enrolled_at || (version !== null && version !== collector.version)) {
          touchCollector(db, id, version, at);
        }
        return true;
      })
      .immediate(),
  );
  if (!fresh) throw refuse('replayed request');
  return collector;
}

/** One line, said the same way on both sides, when a collector speaks another protocol version. */
export function checkProtocol(given: string | undefined): void {
  if (given !== String(PROTOCOL_VERSION)) {
    throw new ApiError(
      'CONFLICT',
      `Collector protocol mismatch: the central speaks version ${PROTOCOL_VERSION}, the collector ${given ?? 'none'}; run the same confvault release on both.`,
      { central_protocol: PROTOCOL_VERSION },
    );
  }
}

/** A collector by name (CLI, web) or id (API); 404 when there is none. */
function requireCollector(db: DB, ref: string | number): CollectorRow {
  const c = typeof ref === 'number' ? getCollectorRow(db, ref) : getCollectorByName(db, ref);
  if (!c) throw ApiError.notFound(typeof ref === 'number' ? `collector ${ref}` : `collector "${ref}"`);
  return c;
}

/** Revokes a collector (by name or id): its key is refused from now on. Revoking it again changes nothing. */
export function revokeCollector(db: DB, actor: Actor, ref: string | number, at = Date.now()): CollectorRow {
  requireManage(actor, COLLECTOR_OPS.revoke);
  return db
    .transaction(() => {
      const c = requireCollector(db, ref);
      if (revokeCollectorRow(db, c.id, at))
        recordAudit(db, actor, { action: 'collector.revoke', target: `collector ${c.id}`, details: { name: c.name, zone: c.zone } }, at);
      return getCollectorRow(db, c.id)!;
    })
    .immediate();
}

export interface CollectorView {
  id: number;
  name: string;
  zone: string;
  version: string | null;
  enrolled_at: number;
  last_seen_at: number | null;
  /** revoked, offline (not seen within `offlineAfterMs`) or online. */
  state: 'online' | 'offline' | 'revoked';
  leased_total: number;
  stored_total: number;
  /** Backups it delivered in the last hour. */
  stored_last_hour: number;
  /** The zone's queue: devices waiting and devices leased (to any of the zone's collectors). */
  queued: number;
  leased: number;
}

const isOnline = (c: CollectorRow, offlineAfterMs: number, at: number) => c.last_seen_at !== null && at - c.last_seen_at <= offlineAfterMs;

export function listCollectors(db: DB, reader: Actor | Principal, offlineAfterMs: number, at = Date.now()): CollectorView[] {
  authorize(reader, COLLECTOR_OPS.list);
  const queues = new Map(workCountRows(db).map((r) => [r.zone, r]));
  const lastHour = new Map(recentResultCountRows(db, at - 3_600_000).map((r) => [r.collector_id, r.n]));
  return listCollectorRows(db).map((c) => ({
    id: c.id,
    name: c.name,
    zone: c.zone,
    version: c.version,
    enrolled_at: c.enrolled_at,
    last_seen_at: c.last_seen_at,
    state: c.revoked_at !== null ? 'revoked' : isOnline(c, offlineAfterMs, at) ? 'online' : 'offline',
    leased_total: c.leased_total,
    stored_total: c.stored_total,
    stored_last_hour: lastHour.get(c.id) ?? 0,
    queued: queues.get(c.zone)?.queued ?? 0,
    leased: queues.get(c.zone)?.leased ?? 0,
  }));
}

/** One page of the list (the API's), and the total. */
export function pageCollectors(
  db: DB,
  reader: Actor | Principal,
  offlineAfterMs: number,
  page: number,
  limit: number,
): { items: CollectorView[]; total: number } {
  const all = listCollectors(db, reader, offlineAfterMs);
  return { items: all.slice((page - 1) * limit, page * limit), total: all.length };
}

/** One collector as the list shows it (the answer of a change). */
export function getCollectorView(db: DB, reader: Actor | Principal, id: number, offlineAfterMs: number): CollectorView {
  const found = listCollectors(db, reader, offlineAfterMs).find((c) => c.id === id);
  if (!found) throw ApiError.notFound(`collector ${id}`);
  return found;
}

/**
 * Of `deviceIds`, those in a remote zone where no collector is online (none enrolled, all revoked, or none seen
 * within `offlineAfterMs`), with their zone: their backups wait for the collector, so they show "collector offline"
 * rather than a reachability the central never measured. Read at call time; nothing is stored.
 */
export function devicesWithCollectorOffline(db: DB, deviceIds: readonly number[], offlineAfterMs: number, at = Date.now()): Map<number, string> {
  const out = new Map<number, string>();
  if (deviceIds.length === 0) return out;
  const online = new Set(
    listCollectorRows(db)
      .filter((c) => c.revoked_at === null && isOnline(c, offlineAfterMs, at))
      .map((c) => c.zone),
  );
  for (const r of effectiveZoneRows(db, deviceIds)) if (!online.has(r.zone)) out.set(r.device_id, r.zone);
  return out;
}

/** Puts a device (by name or id) or a group (by id) in a zone; null: back to the central appliance (the CLI's door). */
export function setZone(db: DB, actor: Actor, what: { device: string | number } | { group: number }, zone: string | null): void {
  requireManage(actor, COLLECTOR_OPS.zone);
  db.transaction(() => {
    if ('device' in what) {
      const id = typeof what.device === 'number' ? what.device : getDeviceIdByName(db, what.device);
      if (id === undefined) throw ApiError.notFound(`device "${what.device}"`);
      changeZone(db, actor, { device: id }, zone);
    } else changeZone(db, actor, what, zone);
  }).immediate();
}

/**
 * Puts one device or group (by id) in `zone`, inside the caller's transaction: the zone name rule, then (only when
 * the zone changes) collectors.zone's permissions with scope all, the write and its audit row. The zone a record has
 * already needs no permission, so a client may write back what it read. Every door (CLI, API device and group
 * writes, web forms) comes here. Null: the central appliance (a device without a zone follows its nearest group's).
 */
export function changeZone(db: DB, actor: Actor, target: { device: number } | { group: number }, zone: string | null): boolean {
  if (zone !== null) checkZone(zone);
  const device = 'device' in target;
  const id = device ? target.device : target.group;
  const before = device ? getDeviceZoneRow(db, id) : getGroupZoneRow(db, id);
  if (before === undefined) throw ApiError.notFound(`${device ? 'device' : 'group'} ${id}`);
  if (before === zone) return false;
  requireManage(actor, COLLECTOR_OPS.zone);
  if (device) setDeviceZoneRow(db, id, zone);
  else setGroupZoneRow(db, id, zone);
  recordAudit(db, actor, {
    action: device ? 'device.zone' : 'group.zone',
    target: `${device ? 'device' : 'group'} ${id}`,
    changes: { zone: { before, after: zone } },
    details: { zone },
  });
  return true;
}

/** Moves a collector to another zone: from its next lease on it serves that zone's devices (leases it holds stay valid). */
export function setCollectorZone(db: DB, actor: Actor, ref: string | number, zone: string): CollectorRow {
  requireManage(actor, COLLECTOR_OPS.zone);
  checkZone(zone);
  return db
    .transaction(() => {
      const c = requireCollector(db, ref);
      if (c.zone !== zone) {
        setCollectorZoneRow(db, c.id, zone);
        recordAudit(db, actor, {
          action: 'collector.zone',
          target: `collector ${c.id}`,
          changes: { zone: { before: c.zone, after: zone } },
          details: { name: c.name, zone },
        });
      }
      return getCollectorRow(db, c.id)!;
    })
    .immediate();
}
