// A value a page shows exactly once after a POST/redirect/GET (a new API key): kept in memory only, for one web session, briefly.
import { randomBytes } from 'node:crypto';

/** Bounded: at most this many values wait to be shown; past it the oldest goes (its page then says "no longer shown"). */
const MAX_WAITING = 1_000;
/** A value not picked up by the redirected GET within this time is dropped. */
const TTL_MS = 2 * 60_000;

interface Waiting {
  session: string;
  value: string;
  at: number;
}

const waiting = new Map<string, Waiting>();

/** Keeps `value` for the session (its id hash, hex) and returns the one-time reference for the redirect's query string. */
export function keepForOneShow(session: Buffer, value: string, now = Date.now()): string {
  for (const [ref, w] of waiting) if (now - w.at > TTL_MS) waiting.delete(ref);
  while (waiting.size >= MAX_WAITING) waiting.delete(waiting.keys().next().value as string);
  const ref = randomBytes(12).toString('base64url');
  waiting.set(ref, { session: session.toString('hex'), value, at: now });
  return ref;
}

/** The value once, to the session that kept it: a reload, another session or a late visit gets null. */
export function takeShownOnce(session: Buffer, ref: string, now = Date.now()): string | null {
  const w = waiting.get(ref);
  if (!w || w.session !== session.toString('hex')) return null;
  waiting.delete(ref);
  return now - w.at > TTL_MS ? null : w.value;
}
