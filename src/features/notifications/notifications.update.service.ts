// Changing a notification channel in place (rename, retarget, new or cleared secret): validated and policy-checked as a new one, audited.
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize, requireScopeAll } from '../../identity/policy';
import type { SecretBox } from '../../identity/secrets';
import type { DestinationPolicy } from '../../lib/destinations';
import { recordAudit, changesBetween } from '../audit/audit.service';
import { NOTIFICATION_OPS } from './notifications.policy';
import {
  channelParts,
  channelSecrets,
  channelTarget,
  checkDestination,
  findChannel,
  toChannelInfo,
  type ChannelInfo,
  type ChannelInput,
} from './notifications.service';
import { getChannelByName, updateChannelRow, type ChannelType } from './notifications.store';
import type { ChannelSecrets } from './notifications.types';

/** What may change: everything but the type; `secret` null clears it, omitted keeps it. */
export type ChannelUpdate = Partial<Omit<ChannelInput, 'type' | 'secret'>> & { secret?: string | null };

/** The one secret a channel of this type holds (for Slack and Teams: the incoming-webhook URL). */
function secretOf(type: ChannelType, s: ChannelSecrets): string | undefined {
  if (type === 'webhook') return s.hmac_secret;
  if (type === 'email') return s.smtp_password;
  return type === 'slack' || type === 'teams' ? s.url : undefined;
}

/**
 * The channel as it is, with the change laid over it. A Slack or Teams channel given a new `url` takes it as its
 * (secret) webhook URL, as when it was added.
 */
function merged(info: ChannelInfo, secret: string | undefined, patch: ChannelUpdate): ChannelInput {
  const { secret: newSecret, ...given } = patch;
  const fields = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as typeof given;
  const webhookUrl = (info.type === 'slack' || info.type === 'teams') && fields.url !== undefined;
  const kept = webhookUrl ? undefined : secret;
  return { ...info.settings, name: info.name, type: info.type, ...fields, secret: newSecret === undefined ? kept : (newSecret ?? undefined) };
}

/**
 * Change a channel. As adding one: the result is validated field by field (422), its destination must be inside
 * allowed_destinations (422), and only a user with device-group scope "all" may retarget where the appliance
 * connects. Missing: 404; a new name in use: 409. One audit row with what changed (a secret only as "changed").
 */
export async function updateChannel(
  db: DB,
  actor: Actor,
  secrets: SecretBox,
  policy: DestinationPolicy,
  name: string,
  patch: ChannelUpdate,
): Promise<ChannelInfo> {
  authorize(actor, NOTIFICATION_OPS.updateChannel);
  requireScopeAll(actor, 'Changing a notification channel needs device-group scope "all": it decides where the appliance connects');
  const row = findChannel(db, name);
  const before = toChannelInfo(row);
  const input = merged(before, secretOf(row.type, channelSecrets(secrets, row)), patch);
  const parts = channelParts(input);
  await checkDestination(policy, channelTarget(parts.type, parts.settings, parts.secrets));
  const secretChanged = patch.secret !== undefined || JSON.stringify(parts.secrets) !== JSON.stringify(channelSecrets(secrets, row));
  const enc = !secretChanged ? row.secret_enc : Object.keys(parts.secrets).length ? secrets.encrypt(JSON.stringify(parts.secrets)) : null;
  return db
    .transaction(() => {
      const current = getChannelByName(db, name);
      if (!current || current.id !== row.id) throw ApiError.notFound(`Notification channel "${name}"`);
      const taken = input.name !== name ? getChannelByName(db, input.name) : undefined;
      if (taken) throw new ApiError('CONFLICT', `A notification channel named "${input.name}" already exists`);
      updateChannelRow(db, row.id, { name: input.name, settings: JSON.stringify(parts.settings), secret_enc: enc });
      const after: ChannelInfo = { ...before, name: input.name, settings: parts.settings, has_secret: enc !== null };
      const changes = changesBetween(before, after, { ignore: ['id', 'type', 'last_sent_at', 'has_secret'] });
      if (secretChanged) changes.secret = 'changed';
      if (Object.keys(changes).length) recordAudit(db, actor, { action: 'notification_channel.update', target: `notification channel ${name}`, changes });
      return after;
    })
    .immediate();
}
