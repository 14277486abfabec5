// Notifications: channels and rules (policy + audit), deliveries; the events themselves are in notification-events.service.ts.
import type { DB } from '../../db/open';
import { ApiError, type FieldError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize, requireGroupInScope, requireOwnsSharedThing, requireScopeAll } from '../../identity/policy';
import { NOTIFICATION_OPS } from './notifications.policy';
import type { SecretBox } from '../../identity/secrets';
import type { AppConfig } from '../../config/config';
import { DestinationPolicy, DestinationRefused } from '../../lib/destinations';
import { hasControlCharacters } from '../../lib/names';
import { changesBetween, recordAudit } from '../audit/audit.service';
import {
  deleteChannelRow,
  deleteRuleRow,
  getChannelByName,
  getRuleByName,
  groupExists,
  insertChannel,
  insertRule,
  listChannelRows,
  listDeliveryRows,
  listRuleRows,
  updateRuleRow,
  type ChannelRow,
  type ChannelType,
  type DeliveryRow,
  type RuleRow,
} from './notifications.store';
import { CHANNEL_TYPES, NOTIFICATION_EVENTS, type ChannelSecrets, type ChannelSettings, type NotificationEvent } from './notifications.types';

export interface ChannelInput {
  name: string;
  type: string;
  url?: string;
  /** webhook: HMAC key; slack/teams: the incoming-webhook URL; email: the SMTP password. */
  secret?: string;
  smtp_host?: string;
  smtp_port?: number;
  smtp_tls?: string;
  smtp_user?: string;
  from?: string;
  to?: string[];
}

export interface ChannelInfo {
  id: number;
  name: string;
  type: ChannelType;
  settings: ChannelSettings;
  has_secret: boolean;
  last_sent_at: number | null;
}

export interface RuleInfo {
  id: number;
  name: string;
  events: NotificationEvent[];
  include_diff: boolean;
  channel_ids: number[];
  group_ids: number[];
}

const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

function fail(field: string, message: string): never {
  throw ApiError.validation([{ field, message }], `${field}: ${message}`);
}

function checkUrl(field: string, v: string | undefined, schemes: string[]): string {
  if (!v) fail(field, 'is required for this channel type');
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    fail(field, 'is not a valid URL');
  }
  if (!schemes.includes(u.protocol)) fail(field, `must start with ${schemes.map((s) => s + '//').join(' or ')}`);
  return v;
}

/** Validated settings and secrets of a channel, new or changed (422 naming the field). */
export function channelParts(input: ChannelInput): { type: ChannelType; settings: ChannelSettings; secrets: ChannelSecrets } {
  const errors: FieldError[] = [];
  if (!NAME_RE.test(input.name ?? '')) errors.push({ field: 'name', message: 'letters, digits, ".", "_" or "-", 1-64 characters' });
  if (!(CHANNEL_TYPES as readonly string[]).includes(input.type)) errors.push({ field: 'type', message: `one of ${CHANNEL_TYPES.join(', ')}` });
  if (errors.length) throw ApiError.validation(errors, errors.map((e) => `${e.field}: ${e.message}`).join('; '));
  const type = input.type as ChannelType;
  const secret = input.secret?.trim() || undefined;
  if (secret && hasControlCharacters(secret)) fail('secret', 'must not contain control characters');
  switch (type) {
    case 'webhook':
      return { type, settings: { url: checkUrl('url', input.url, ['http:', 'https:']) }, secrets: secret ? { hmac_secret: secret } : {} };
    case 'slack':
    case 'teams':
      // The incoming-webhook URL carries its token: it is the channel's secret (--url or --secret-stdin).
      return { type, settings: {}, secrets: { url: checkUrl('url', secret ?? input.url, ['https:', 'http:']) } };
    case 'syslog':
      return { type, settings: { url: checkUrl('url', input.url, ['udp:', 'tcp:']) }, secrets: {} };
    case 'email': {
      if (!input.smtp_host) fail('smtp_host', 'is required for e-mail');
      const port = input.smtp_port ?? 587;
      if (!Number.isInteger(port) || port < 1 || port > 65535) fail('smtp_port', 'must be 1-65535');
      const tls = input.smtp_tls ?? (port === 465 ? 'tls' : 'starttls');
      if (!['none', 'starttls', 'tls'].includes(tls)) fail('smtp_tls', 'one of none, starttls, tls');
      const mail = /^[^\s@<>]+@[^\s@<>]+$/;
      if (!input.from || !mail.test(input.from)) fail('from', 'must be an e-mail address');
      const to = (input.to ?? []).map((s) => s.trim()).filter(Boolean);
      if (!to.length || to.some((a) => !mail.test(a))) fail('to', 'one or more e-mail addresses, comma-separated');
      const settings: ChannelSettings = { smtp_host: input.smtp_host, smtp_port: port, smtp_tls: tls as ChannelSettings['smtp_tls'], from: input.from, to };
      if (input.smtp_user) settings.smtp_user = input.smtp_user;
      return { type, settings, secrets: secret ? { smtp_password: secret } : {} };
    }
  }
}

export function toChannelInfo(row: ChannelRow): ChannelInfo {
  return {
    id: row.id,
    name: row.name,
    type: row.type,
    settings: JSON.parse(row.settings) as ChannelSettings,
    has_secret: row.secret_enc !== null,
    last_sent_at: row.last_sent_at,
  };
}

export function channelSecrets(secrets: SecretBox, row: ChannelRow): ChannelSecrets {
  return row.secret_enc ? (JSON.parse(secrets.decrypt(row.secret_enc)) as ChannelSecrets) : {};
}

/** The destination policy of `[notifications] allowed_destinations`. */
export function destinationPolicy(config: Readonly<AppConfig>): DestinationPolicy {
  return new DestinationPolicy(config.notifications.allowed_destinations);
}

/** Where a channel connects, with the input field that names it. */
export function channelTarget(type: ChannelType, settings: ChannelSettings, secrets: ChannelSecrets): { field: string; host: string; port: number } {
  if (type === 'email') return { field: 'smtp_host', host: settings.smtp_host ?? '', port: settings.smtp_port ?? 587 };
  const u = new URL((type === 'slack' || type === 'teams' ? secrets.url : settings.url) ?? '');
  const port = Number(u.port || { 'http:': 80, 'https:': 443, 'udp:': 514, 'tcp:': 514 }[u.protocol] || 0);
  return { field: 'url', host: u.hostname.replace(/^\[|\]$/g, ''), port };
}

/** A destination outside allowed_destinations (or a host that does not resolve) is a 422 naming the field. */
export async function checkDestination(policy: DestinationPolicy, target: { field: string; host: string; port: number }): Promise<void> {
  try {
    await policy.resolve(target.host, target.port);
  } catch (e) {
    if (e instanceof DestinationRefused) fail(target.field, `${e.message}; ask the administrator of the appliance to allow it`);
    // A name that does not resolve now (DNS down, a receiver not set up yet) is checked at every send instead.
  }
}

/**
 * Add a channel. Where the appliance sends is policy: the destination must be inside allowed_destinations, and
 * only a user with device-group scope "all" adds channels (a channel may carry any rule's messages).
 */
export async function createChannel(db: DB, actor: Actor, secrets: SecretBox, policy: DestinationPolicy, input: ChannelInput): Promise<ChannelInfo> {
  authorize(actor, NOTIFICATION_OPS.addChannel);
  requireScopeAll(actor, 'Adding a notification channel needs device-group scope "all": it decides where the appliance connects');
  const parts = channelParts(input);
  await checkDestination(policy, channelTarget(parts.type, parts.settings, parts.secrets));
  const enc = Object.keys(parts.secrets).length ? secrets.encrypt(JSON.stringify(parts.secrets)) : null;
  return db
    .transaction(() => {
      if (getChannelByName(db, input.name)) throw new ApiError('CONFLICT', `A notification channel named "${input.name}" already exists`);
      const id = insertChannel(db, { name: input.name, type: parts.type, settings: JSON.stringify(parts.settings), secret_enc: enc });
      const changes: Record<string, { before: unknown; after: unknown } | 'changed'> = {
        type: { before: null, after: parts.type },
        settings: { before: null, after: parts.settings },
      };
      for (const k of Object.keys(parts.secrets)) changes[k] = 'changed';
      recordAudit(db, actor, { action: 'notification_channel.create', target: `notification channel ${input.name}`, changes });
      return { id, name: input.name, type: parts.type, settings: parts.settings, has_secret: enc !== null, last_sent_at: null };
    })
    .immediate();
}

export function listChannels(db: DB, actor: Actor): ChannelInfo[] {
  authorize(actor, NOTIFICATION_OPS.view);
  return listChannelRows(db).map(toChannelInfo);
}

export function findChannel(db: DB, name: string): ChannelRow {
  const row = getChannelByName(db, name);
  if (!row) throw ApiError.notFound(`Notification channel "${name}"`);
  return row;
}

export function removeChannel(db: DB, actor: Actor, name: string): void {
  authorize(actor, NOTIFICATION_OPS.removeChannel);
  db.transaction(() => {
    const row = findChannel(db, name);
    requireChannelOwned(db, actor, row, 'removed');
    deleteChannelRow(db, row.id);
    recordAudit(db, actor, { action: 'notification_channel.delete', target: `notification channel ${name}`, details: { type: row.type } });
  }).immediate();
}

/**
 * A channel carries the messages of every rule using it: an actor may not remove or retarget a channel used by a
 * rule they could not change themselves (one covering devices outside their scope), or they would silence it.
 */
function requireChannelOwned(db: DB, actor: Actor, row: ChannelRow, verb: string): void {
  requireOwnsSharedThing(
    actor,
    { label: `Notification channel ${row.name}`, use: 'notification rule', details: { channel: row.name } },
    (groups) => {
      const inScope = new Set(groups);
      const rules = listRuleRows(db).map(toRuleInfo);
      return rules.filter((r) => r.channel_ids.includes(row.id) && (r.group_ids.length === 0 || r.group_ids.some((g) => !inScope.has(g)))).length;
    },
    verb,
  );
}

export function toRuleInfo(r: RuleRow): RuleInfo {
  return {
    id: r.id,
    name: r.name,
    events: JSON.parse(r.events) as NotificationEvent[],
    include_diff: r.include_diff === 1,
    channel_ids: JSON.parse(r.channel_ids ?? '[]') as number[],
    group_ids: JSON.parse(r.group_ids ?? '[]') as number[],
  };
}

type RuleInput = { events: string[]; channels: string[]; groups?: number[]; include_diff?: boolean };

/** The checks of what a rule sends and where, before its transaction (422 naming the field; 403 outside the actor's scope). */
function checkRuleInput(actor: Actor, input: RuleInput): { events: NotificationEvent[]; groups: number[]; includeDiff: boolean } {
  const events = [...new Set(input.events)];
  const bad = events.filter((e) => !(NOTIFICATION_EVENTS as readonly string[]).includes(e));
  if (!events.length || bad.length) fail('events', `one or more of ${NOTIFICATION_EVENTS.join(', ')}${bad.length ? ` (unknown: ${bad.join(', ')})` : ''}`);
  if (!input.channels.length) fail('channels', 'name at least one channel');
  const groups = [...new Set(input.groups ?? [])];
  requireRuleInScope(actor, groups, input.include_diff === true);
  return { events: events as NotificationEvent[], groups, includeDiff: input.include_diff === true };
}

/** The channels and groups a rule names, inside its transaction: each must exist (422). */
function ruleChannelIds(db: DB, channels: string[], groups: number[]): number[] {
  const channelIds = [...new Set(channels)].map((n) => {
    const c = getChannelByName(db, n);
    if (!c) fail('channels', `no channel named "${n}"`);
    return c.id;
  });
  for (const g of groups) if (!groupExists(db, g)) fail('groups', `device group ${g} does not exist`);
  return channelIds;
}

export function createRule(db: DB, actor: Actor, input: RuleInput & { name: string }): RuleInfo {
  authorize(actor, NOTIFICATION_OPS.addRule);
  if (!NAME_RE.test(input.name ?? '')) fail('name', 'letters, digits, ".", "_" or "-", 1-64 characters');
  const { events, groups, includeDiff } = checkRuleInput(actor, input);
  return db
    .transaction(() => {
      if (getRuleByName(db, input.name)) throw new ApiError('CONFLICT', `A notification rule named "${input.name}" already exists`);
      const channelIds = ruleChannelIds(db, input.channels, groups);
      const id = insertRule(db, { name: input.name, events, include_diff: includeDiff, channelIds, groupIds: groups });
      const info: RuleInfo = { id, name: input.name, events, include_diff: includeDiff, channel_ids: channelIds, group_ids: groups };
      recordAudit(db, actor, {
        action: 'notification_rule.create',
        target: `notification rule ${input.name}`,
        changes: {
          events: { before: null, after: events },
          channels: { before: null, after: input.channels },
          groups: { before: null, after: groups },
          include_diff: { before: null, after: info.include_diff },
        },
      });
      return info;
    })
    .immediate();
}

/**
 * Replace what a rule sends and where. The rule as it was and as it becomes must both lie inside the actor's scope
 * (as for removing and adding one). Missing: 404. One audit row with what changed.
 */
export function updateRule(db: DB, actor: Actor, name: string, input: RuleInput): RuleInfo {
  authorize(actor, NOTIFICATION_OPS.updateRule);
  const { events, groups, includeDiff } = checkRuleInput(actor, input);
  return db
    .transaction(() => {
      const row = getRuleByName(db, name);
      if (!row) throw ApiError.notFound(`Notification rule "${name}"`);
      const before = toRuleInfo(row);
      requireRuleInScope(actor, before.group_ids, false);
      const channelIds = ruleChannelIds(db, input.channels, groups);
      updateRuleRow(db, row.id, { events, include_diff: includeDiff, channelIds, groupIds: groups });
      const after: RuleInfo = { id: row.id, name, events, include_diff: includeDiff, channel_ids: channelIds, group_ids: groups };
      recordAudit(db, actor, {
        action: 'notification_rule.update',
        target: `notification rule ${name}`,
        changes: changesBetween(before, after, { ignore: ['id', 'name'] }),
      });
      return after;
    })
    .immediate();
}

/**
 * A rule sends facts (and with include_diff, configuration text) about every device it covers: an actor may only
 * make or remove rules covering devices in their own scope, and only ask for diffs when they may read backups.
 */
function requireRuleInScope(actor: Actor, groups: number[], includeDiff: boolean): void {
  if (!groups.length) requireScopeAll(actor, 'A rule without groups covers every device: it needs device-group scope "all"; name groups in your scope');
  for (const g of groups) requireGroupInScope(actor, g, `Device group ${g}`);
  if (includeDiff) authorize(actor, 'backups.view');
}

export function listRules(db: DB, actor: Actor): RuleInfo[] {
  authorize(actor, NOTIFICATION_OPS.view);
  return listRuleRows(db).map(toRuleInfo);
}

export function removeRule(db: DB, actor: Actor, name: string): void {
  authorize(actor, NOTIFICATION_OPS.removeRule);
  db.transaction(() => {
    const row = getRuleByName(db, name);
    if (!row) throw ApiError.notFound(`Notification rule "${name}"`);
    const info = toRuleInfo(row);
    requireRuleInScope(actor, info.group_ids, false);
    deleteRuleRow(db, row.id);
    recordAudit(db, actor, { action: 'notification_rule.delete', target: `notification rule ${name}` });
  }).immediate();
}

export function listDeliveries(db: DB, actor: Actor, channelName: string | null, limit = 50): DeliveryRow[] {
  authorize(actor, NOTIFICATION_OPS.view);
  return listDeliveryRows(db, channelName === null ? null : findChannel(db, channelName).id, limit);
}

// ---- events into the outbox (called inside the transaction of the event) ----
