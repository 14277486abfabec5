// Sending one built message over a channel: webhook (HMAC-signed JSON), Slack/Teams incoming webhooks, SMTP mail, syslog.
import { createHmac } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect, isIP } from 'node:net';
import { hostname } from 'node:os';
import nodemailer from 'nodemailer';
import type { DestinationPolicy } from '../../lib/destinations';
import { HttpStatus, RedirectRefused } from './notifications.failures';
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

/**
 * POST to an allowed address only: the host is resolved and checked here, and the request goes to that very address
 * (Host and TLS server name stay the URL's). A redirect is never followed; nothing of the answer but its status is kept.
 */
async function post(policy: DestinationPolicy, url: string, body: string, headers: Record<string, string>): Promise<void> {
  const u = new URL(url);
  const tls = u.protocol === 'https:';
  const port = Number(u.port || (tls ? 443 : 80));
  const name = u.hostname.replace(/^\[|\]$/g, '');
  const address = await policy.resolve(name, port);
  const status = await new Promise<number>((resolve, reject) => {
    const req = (tls ? httpsRequest : httpRequest)({
      host: address,
      port,
      method: 'POST',
      path: `${u.pathname}${u.search}`,
      servername: tls && !isIP(name) ? name : undefined,
      headers: { Host: u.host, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'User-Agent': 'confvault', ...headers },
      timeout: SEND_TIMEOUT_MS,
    });
    req.once('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    req.once('error', reject);
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => resolve(res.statusCode ?? 0));
      res.once('error', reject);
    });
    req.end(body);
  });
  if (status >= 300 && status < 400) throw new RedirectRefused(`the receiver answered HTTP ${status} (a redirect, not followed)`);
  if (status < 200 || status >= 300) throw new HttpStatus(status);
}

function syslogLine(p: Payload): string {
  // RFC 5424: facility daemon (3), severity notice (5) for changes, warning (4) otherwise.
  const sev = items(p).every((i) => i.event === 'config_changed' || i.event === 'device_recovered' || i.event === 'test') ? 5 : 4;
  const sd = `[confvault@32473 delivery="${p.delivery_id}" event="${p.event}"]`;
  const text = messageText(p).replace(/\n/g, ' | ').slice(0, 7000);
  return `<${3 * 8 + sev}>1 ${new Date().toISOString()} ${hostname() || '-'} confvault - ${p.event} ${sd} ${text}`;
}

async function sendSyslog(policy: DestinationPolicy, url: string, line: string): Promise<void> {
  const u = new URL(url);
  const port = Number(u.port || 514);
  const host = await policy.resolve(u.hostname.replace(/^\[|\]$/g, ''), port);
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
    s.once('timeout', () => s.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
    s.once('error', reject);
  });
}

/**
 * Send one message to an allowed destination; throws when the receiver did not take it (the caller reports it by
 * failureClass, never with what the far end said).
 */
export async function sendMessage(ch: Channel, p: Payload, policy: DestinationPolicy): Promise<void> {
  const body = JSON.stringify(p);
  switch (ch.type) {
    case 'webhook': {
      const headers: Record<string, string> = { 'X-Confvault-Delivery': p.delivery_id, 'X-Confvault-Event': p.event };
      if (ch.secrets.hmac_secret) {
        const ts = String(Math.floor(Date.now() / 1000));
        headers['X-Confvault-Timestamp'] = ts;
        headers['X-Confvault-Signature'] = signBody(ch.secrets.hmac_secret, ts, body);
      }
      return post(policy, ch.settings.url ?? '', body, headers);
    }
    case 'slack':
      return post(policy, ch.secrets.url ?? '', JSON.stringify({ text: messageText(p) }), { 'X-Confvault-Delivery': p.delivery_id });
    case 'teams':
      return post(policy, ch.secrets.url ?? '', JSON.stringify(teamsBody(p)), { 'X-Confvault-Delivery': p.delivery_id });
    case 'syslog':
      return sendSyslog(policy, ch.settings.url ?? '', syslogLine(p));
    case 'email': {
      const s = ch.settings;
      const name = (s.smtp_host ?? '').replace(/^\[|\]$/g, '');
      const transport = nodemailer.createTransport({
        host: await policy.resolve(name, s.smtp_port ?? 587),
        servername: isIP(name) ? undefined : name,
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
