// Notification events, channel settings and the webhook payload shape (docs/webhook-payload.schema.json).
export const NOTIFICATION_EVENTS = [
  'config_changed',
  'backup_failed',
  'device_unreachable',
  'device_recovered',
  'backup_stale',
  'compliance_failed',
  'compliance_recovered',
] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];
export const CHANNEL_TYPES = ['webhook', 'slack', 'teams', 'email', 'syslog'] as const;

/** Channel settings kept in clear (shown in lists). */
export interface ChannelSettings {
  /** webhook: the URL (its secret part, if any, is the HMAC secret); syslog: udp://host:port or tcp://host:port. */
  url?: string;
  smtp_host?: string;
  smtp_port?: number;
  /** none: plain SMTP; starttls: upgrade required; tls: TLS from the first byte. */
  smtp_tls?: 'none' | 'starttls' | 'tls';
  smtp_user?: string;
  from?: string;
  to?: string[];
}

/** Channel secrets, encrypted at rest, never shown again. */
export interface ChannelSecrets {
  /** Slack / Teams incoming-webhook URL (it carries the token). */
  url?: string;
  /** webhook HMAC-SHA256 key. */
  hmac_secret?: string;
  smtp_password?: string;
}

export interface DevicePart {
  id: number;
  name: string;
  hostname: string;
  group_path: string | null;
}

export interface BackupPart {
  id: string;
  trigger: string;
  changed_by: string | null;
  success: boolean;
  failure_type: string | null;
}

/** One event as it appears in a payload (alone, or in a digest's `events`). */
export interface EventItem {
  event: NotificationEvent | 'test';
  occurred_at: string;
  device: DevicePart | null;
  backup: BackupPart | null;
  summary: string;
  diff?: string;
  diff_truncated?: boolean;
}

/** What the outbox keeps besides the item, to compute the diff when the message is built. */
export interface OutboxDiffRef {
  template_id: number | null;
  snapshot: string | null;
  previous_snapshot: string | null;
}

export type Payload =
  (EventItem & { delivery_id: string }) | { event: 'digest'; delivery_id: string; occurred_at: string; summary: string; events: EventItem[] };
