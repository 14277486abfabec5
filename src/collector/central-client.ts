// The site's HTTP(S) client of the central appliance: signed JSON requests to /collector/v1 (protocol 2), a CA file of its own, no key in any URL.
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { HEADERS, PROTOCOL_PREFIX, PROTOCOL_VERSION, canonicalRequest, signRequest } from '../lib/collector-protocol';
import { VERSION } from '../version';

export interface CentralAnswer {
  status: number;
  body: unknown;
}

/** The central could not be reached (network, TLS, timeout): the caller spools and retries later. */
export class CentralUnreachable extends Error {}

/** The central speaks another protocol version: one line, and the collector stops. */
export class ProtocolMismatch extends Error {}

export interface ClientOptions {
  central_url: string;
  ca?: Buffer;
  timeout_ms?: number;
  /** Signs every request when given; enrolment is the one unsigned request. */
  signer?: { collector_id: number; signing_private: string };
}

/** `signal` ends the request (a held lease request when the collector stops); it then fails as CentralUnreachable. */
export function centralPost(o: ClientOptions, route: string, payload: unknown, signal?: AbortSignal): Promise<CentralAnswer> {
  const url = new URL(PROTOCOL_PREFIX + route, o.central_url);
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(body.length),
    [HEADERS.protocol]: String(PROTOCOL_VERSION),
    [HEADERS.version]: VERSION,
  };
  if (o.signer) {
    const timestamp = String(Date.now());
    const nonce = randomBytes(18).toString('base64url');
    headers[HEADERS.id] = String(o.signer.collector_id);
    headers[HEADERS.timestamp] = timestamp;
    headers[HEADERS.nonce] = nonce;
    headers[HEADERS.signature] = signRequest(o.signer.signing_private, canonicalRequest('POST', url.pathname + url.search, timestamp, nonce, body));
  }
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'POST', headers, ca: o.ca, timeout: o.timeout_ms ?? 30_000, signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (e) => reject(new CentralUnreachable(`${url.origin}: ${e.message}`)));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON: kept as text for the message */
        }
        const theirs = res.headers[HEADERS.protocol];
        if (res.statusCode === 409 && theirs !== undefined && theirs !== String(PROTOCOL_VERSION)) {
          return reject(
            new ProtocolMismatch(
              `Collector protocol mismatch: the central speaks version ${String(theirs)}, this collector ${PROTOCOL_VERSION}; run the same confvault release on both.`,
            ),
          );
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => reject(new CentralUnreachable(`${url.origin}: ${e.message}`)));
    req.end(body);
  });
}

/** The message of an error answer ({ error: { message } }), or the status. */
export function answerMessage(a: CentralAnswer): string {
  const m = (a.body as { error?: { message?: unknown } } | null)?.error?.message;
  return typeof m === 'string' ? m : `HTTP ${a.status}`;
}
