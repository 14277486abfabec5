// Schemas of the notification channels and rules API (they generate the OpenAPI components); secrets go in, never out.
import { z } from '@hono/zod-openapi';
import { MAX_ID } from '../../http/openapi';
import { formatNullable } from '../../lib/time';
import type { ChannelInfo, RuleInfo } from './notifications.service';
import { CHANNEL_TYPES, NOTIFICATION_EVENTS } from './notifications.types';

export const NameParams = z.object({
  name: z
    .string()
    .min(1)
    .max(64)
    .openapi({ param: { name: 'name', in: 'path' }, example: 'noc-webhook' }),
});

export const ChannelInputSchema = z
  .object({
    name: z.string().max(64).openapi({ description: 'Letters, digits, ".", "_" or "-", 1-64 characters', example: 'noc-webhook' }),
    type: z.enum(CHANNEL_TYPES),
    url: z
      .string()
      .max(2048)
      .optional()
      .openapi({ description: 'webhook: the URL; syslog: `udp://host:port` or `tcp://host:port`', example: 'https://hooks.example.net/confvault' }),
    secret: z
      .string()
      .max(4096)
      .optional()
      .openapi({ description: 'webhook: HMAC key; slack/teams: the incoming-webhook URL; email: the SMTP password. Stored encrypted, never returned.' }),
    smtp_host: z.string().max(255).optional(),
    smtp_port: z.number().int().optional(),
    smtp_tls: z.enum(['none', 'starttls', 'tls']).optional(),
    smtp_user: z.string().max(255).optional(),
    from: z.string().max(255).optional(),
    to: z.array(z.string().max(255)).max(50).optional(),
  })
  .strict()
  .openapi('NotificationChannelInput', { example: { name: 'noc-webhook', type: 'webhook', url: 'https://hooks.example.net/confvault', secret: 'hmac-key' } });

export const ChannelUpdateSchema = ChannelInputSchema.omit({ type: true, secret: true })
  .partial()
  .extend({
    secret: z
      .string()
      .max(4096)
      .nullable()
      .optional()
      .openapi({ description: 'A new secret (stored encrypted, never returned); null clears it; omitted keeps it.' }),
  })
  .strict()
  .openapi('NotificationChannelUpdate', {
    description: 'Fields to change; omitted fields keep their value. The type cannot change. Unknown fields are refused (422).',
    example: { url: 'https://hooks.example.net/confvault-v2', secret: 'new-hmac-key' },
  });

export const ChannelSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    type: z.enum(CHANNEL_TYPES),
    settings: z.record(z.string(), z.unknown()).openapi({ description: 'The settings kept in clear (URL of a webhook, SMTP host...); no secret' }),
    has_secret: z.boolean(),
    last_sent_at: z.string().nullable().openapi({ description: 'Time as `YYYY-MM-DD HH:MM:SS` in the request time zone' }),
  })
  .openapi('NotificationChannel', {
    example: { id: 1, name: 'noc-webhook', type: 'webhook', settings: { url: 'https://hooks.example.net/confvault' }, has_secret: true, last_sent_at: null },
  });

export const RuleInputSchema = z
  .object({
    name: z.string().max(64).openapi({ example: 'core-changes' }),
    events: z.array(z.enum(NOTIFICATION_EVENTS)).min(1).max(NOTIFICATION_EVENTS.length),
    channels: z.array(z.string().max(64)).min(1).max(50).openapi({ description: 'Channel names' }),
    groups: z
      .array(z.number().int().min(1).max(MAX_ID))
      .max(1000)
      .optional()
      .openapi({ description: 'Device groups (with subgroups); none: every device (scope "all" only)' }),
    include_diff: z.boolean().optional().openapi({ description: 'Send the diff with config_changed (needs backups.view)' }),
  })
  .strict()
  .openapi('NotificationRuleInput', { example: { name: 'core-changes', events: ['config_changed', 'backup_failed'], channels: ['noc-webhook'], groups: [3] } });

export const RuleUpdateSchema = RuleInputSchema.omit({ name: true }).openapi('NotificationRuleUpdate', {
  example: { events: ['config_changed'], channels: ['noc-webhook'], groups: [3, 4], include_diff: true },
});

export const RuleSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    events: z.array(z.enum(NOTIFICATION_EVENTS)),
    include_diff: z.boolean(),
    channel_ids: z.array(z.number().int()),
    group_ids: z.array(z.number().int()),
  })
  .openapi('NotificationRule', { example: { id: 1, name: 'core-changes', events: ['config_changed'], include_diff: false, channel_ids: [1], group_ids: [3] } });

export const ChannelListSchema = z.object({ items: z.array(ChannelSchema) }).openapi('NotificationChannelList');
export const RuleListSchema = z.object({ items: z.array(RuleSchema) }).openapi('NotificationRuleList');

export const toChannelDto = (c: ChannelInfo, tz: string): z.infer<typeof ChannelSchema> => ({
  ...c,
  settings: { ...c.settings },
  last_sent_at: formatNullable(c.last_sent_at, tz),
});
export const toRuleDto = (r: RuleInfo): z.infer<typeof RuleSchema> => ({ ...r });
