// Sending one built message over a channel: webhook (HMAC-signed JSON), Slack/Teams incoming webhooks, SMTP mail, syslog.
import { createHmac } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { hostname } from 'node:os';
import nodemailer from 'nodemailer';
import type { ChannelType } from './notifications.store';
import type { ChannelSecrets, ChannelSettings, EventItem, Payload } from './notifications.types';

export const SEND_TIMEOUT_MS = 15_000;

export interface Channel {
  name: string;
  type: ChannelType;
  settings: ChannelSettings;
  secrets: ChannelSecrets;
}

/** HMAC-SHA256 of `timestamp.body`, hex, as sent in X-Confvault-Signature ("sha256=..."). */
export function signBody(secret: string, timestamp: string, body: string): string {
  return 'sha256=' + createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

function items(p: Payload): EventItem[] {
  return p.event === 'digest' ? p.events : [p];
}

/** Plain text of a message (mail body, chat text): the summary, then each event with its diff. */
export function messageText(p: Payload): string {
  const parts = [p.summary];
  for (const it of items(p)) {
    if (p.event === 'digest') parts.push(`- ${it.occurred_at} ${it.event}: ${it.summary}`);
    if (it.diff) parts.push(`\n${it.diff}${it.diff_truncated ? '\n(diff truncated)' : ''}`);
  }
  return parts.join('\n');
}

/**
 * One body for both kinds of Teams incoming webhook: a Workflows webhook reads the Adaptive Card in `attachments`,
 * a classic Office 365 connector reads the MessageCard fields; each ignores the other's.
 */
function teamsBody(p: Payload) {
  const text = messageText(p);
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: p.summary, weight: 'Bolder', wrap: true },
            { type: 'TextBlock', text: text.slice(p.summary.length).trim() || ' ', wrap: true, fontType: 'Monospace' },
          ],
        },
      },
    ],
    '@type': 'MessageCard',
    '@context': 'https://schema.org/extensions',
    summary: p.summary.slice(0, 200),
    text: text.replace(/\n/g, '  \n'),
  };
}

async function post(url: string, body: string, headers: Record<string, string>): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'confvault', ...headers },
      signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      redirect: 'error',
    });
  } catch (e) {
    // fetch says only "fetch failed"; the cause names what went wrong (ECONNREFUSED, a certificate ...).
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`cannot reach the receiver: ${cause?.code ?? cause?.message ?? (e as Error).message}`);
  }
  await res.arrayBuffer().catch(() => undefined);
  if (!res.ok) throw new Error(`HTTP ${res.status} from the receiver`);
}

function syslogLine(p: Payload): string {
  // RFC 5424: facility daemon (3), severity notice (5) for changes, warning (4) otherwise.
  const sev = items(p).every((i) => i.event === 'config_changed' || i.event === 'device_recovered' || i.event === 'test') ? 5 : 4;
  const sd = `[confvault@32473 delivery="${p.delivery_id}" event="${p.event}"]`;
  const text = messageText(p).replace(/\n/g, ' | ').slice(0, 7000);
  return `<${3 * 8 + sev}>1 ${new Date().toISOString()} ${hostname() || '-'} confvault - ${p.event} ${sd} ${text}`;
}

function sendSyslog(url: string, line: string): Promise<void> {
  const u = new URL(url);
  const port = Number(u.port || 514);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return new Promise((resolve, reject) => {
    if (u.protocol === 'udp:') {
      const sock = createSocket(host.includes(':') ? 'udp6' : 'udp4');
      sock.send(Buffer.from(line), port, host, (e) => {
        sock.close();
        if (e) reject(e);
        else resolve();
      });
      return;
    }
    // TCP with octet-counting framing (RFC 6587).
    const s = connect({ host, port, timeout: SEND_TIMEOUT_MS });
    const frame = `${Buffer.byteLength(line)} ${line}`;
    s.once('connect', () => s.end(frame, () => resolve()));
    s.once('timeout', () => s.destroy(new Error('syslog connection timed out')));
    s.once('error', reject);
  });
}

/** Send one message; throws with a short reason when the receiver did not take it. */
export async function sendMessage(ch: Channel, p: Payload): Promise<void> {
  const body = JSON.stringify(p);
  switch (ch.type) {
    case 'webhook': {
      const headers: Record<string, string> = { 'X-Confvault-Delivery': p.delivery_id, 'X-Confvault-Event': p.event };
      if (ch.secrets.hmac_secret) {
        const ts = String(Math.floor(Date.now() / 1000));
        headers['X-Confvault-Timestamp'] = ts;
        headers['X-Confvault-Signature'] = signBody(ch.secrets.hmac_secret, ts, body);
      }
      return post(ch.settings.url ?? '', body, headers);
    }
    case 'slack':
      return post(ch.secrets.url ?? '', JSON.stringify({ text: messageText(p) }), { 'X-Confvault-Delivery': p.delivery_id });
    case 'teams':
      return post(ch.secrets.url ?? '', JSON.stringify(teamsBody(p)), { 'X-Confvault-Delivery': p.delivery_id });
    case 'syslog':
      return sendSyslog(ch.settings.url ?? '', syslogLine(p));
    case 'email': {
      const s = ch.settings;
      const transport = nodemailer.createTransport({
        host: s.smtp_host,
        port: s.smtp_port,
        secure: s.smtp_tls === 'tls',
        requireTLS: s.smtp_tls === 'starttls',
        ignoreTLS: s.smtp_tls === 'none',
        auth: s.smtp_user ? { user: s.smtp_user, pass: ch.secrets.smtp_password ?? '' } : undefined,
        connectionTimeout: SEND_TIMEOUT_MS,
        greetingTimeout: SEND_TIMEOUT_MS,
        socketTimeout: SEND_TIMEOUT_MS,
      });
      try {
        await transport.sendMail({
          from: s.from,
          to: s.to,
          subject: `[confvault] ${p.summary}`.slice(0, 200),
          text: messageText(p),
          messageId: `<${p.delivery_id}@confvault>`,
          headers: { 'X-Confvault-Delivery': p.delivery_id, 'X-Confvault-Event': p.event },
        });
      } finally {
        transport.close();
      }
    }
  }
}
