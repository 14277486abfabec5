// Syslog wire formats as pure functions: RFC 3164 / RFC 5424 parsing, TCP framing (RFC 6587), change-event matching.
import { compileRe2 } from '../lib/re2';

/** Largest syslog message accepted (bytes as received); a longer one is dropped and counted. */
export const MAX_MESSAGE_BYTES = 8 * 1024;

export interface SyslogMessage {
  format: '3164' | '5424';
  /** PRI: facility * 8 + severity (0-191). */
  pri: number;
  /** The HOSTNAME field, when the message has one ("-" in RFC 5424 counts as none). */
  hostname: string | null;
  /** Everything after the PRI: header and text, what change-event patterns are matched against. */
  text: string;
}

const PRI_RE = /^<(\d{1,3})>/;
// RFC 5424: VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID ...
const V5424_RE = /^1 (\S+) (\S+) (\S+) (\S+) (\S+) /;
// RFC 3164: "Mmm dd hh:mm:ss HOSTNAME ..." (day space-padded); many devices send no HOSTNAME (Cisco: "123: *Mar 1 ...").
const TS3164_RE = /^[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d /;
const HOST_RE = /^[A-Za-z0-9][A-Za-z0-9.\-_:]*$/;

// Runs of control characters (tab excepted) become one space.
// eslint-disable-next-line no-control-regex -- matching control characters is the point of this pattern
const CONTROL_RUNS = /[\x00-\x08\x0a-\x1f\x7f]+/g;

/**
 * Parses one syslog message (without framing). Returns null for anything that is not syslog: no valid PRI, empty,
 * or longer than MAX_MESSAGE_BYTES. Control characters are kept out of the text (a NUL or a newline cannot smuggle
 * a second line into a pattern match or a log line).
 */
export function parseSyslog(raw: string): SyslogMessage | null {
  if (raw.length === 0 || raw.length > MAX_MESSAGE_BYTES) return null;
  const pm = PRI_RE.exec(raw);
  if (!pm) return null;
  const pri = Number(pm[1]);
  if (pri > 191 || (pm[1].length > 1 && pm[1][0] === '0')) return null;
  const text = raw
    .slice(pm[0].length)
    .replace(/^\uFEFF/, '')
    .replace(CONTROL_RUNS, ' ')
    .trimEnd();
  const v = V5424_RE.exec(text);
  if (v) {
    const host = v[2] === '-' ? null : v[2];
    return { format: '5424', pri, hostname: host && HOST_RE.test(host) ? host : null, text };
  }
  let hostname: string | null = null;
  const ts = TS3164_RE.exec(text);
  if (ts) {
    const next = text.slice(ts[0].length).split(' ', 1)[0];
    // "host tag: msg": the token after the timestamp is a hostname unless it is already the tag ("tag:", "%FAC-...").
    if (next && !next.endsWith(':') && !next.startsWith('%') && HOST_RE.test(next)) hostname = next;
  }
  return { format: '3164', pri, hostname, text };
}

export type FrameResult = { messages: string[]; error: null } | { messages: string[]; error: 'oversize' };

/**
 * Splits a TCP syslog stream into messages (RFC 6587): octet counting ("LEN SP MSG") when a frame starts with a digit,
 * otherwise non-transparent framing ended by LF (or NUL). Holds at most MAX_MESSAGE_BYTES + a few bytes between
 * calls: a frame announcing more, or a line running longer, is an error and the connection should be closed.
 */
export class SyslogFramer {
  private buf = '';

  push(chunk: string): FrameResult {
    this.buf += chunk;
    const messages: string[] = [];
    for (;;) {
      if (this.buf.length === 0) break;
      const c = this.buf.charCodeAt(0);
      if (c >= 0x30 && c <= 0x39) {
        const sp = this.buf.indexOf(' ');
        if (sp < 0) {
          if (this.buf.length > 6 || !/^\d+$/.test(this.buf)) return this.fail(messages);
          break;
        }
        const lenText = this.buf.slice(0, sp);
        if (!/^[1-9]\d{0,5}$/.test(lenText)) return this.fail(messages);
        const len = Number(lenText);
        if (len > MAX_MESSAGE_BYTES) return this.fail(messages);
        // Octet counts are bytes; the stream is decoded as latin1 by the receiver, so one char is one byte.
        if (this.buf.length - sp - 1 < len) break;
        messages.push(this.buf.slice(sp + 1, sp + 1 + len).replace(/\n$/, ''));
        this.buf = this.buf.slice(sp + 1 + len);
        continue;
      }
      if (c === 0x0a || c === 0x0d || c === 0x00 || c === 0x20) {
        this.buf = this.buf.slice(1);
        continue;
      }
      const end = this.buf.search(/[\n\0]/);
      if (end < 0) {
        if (this.buf.length > MAX_MESSAGE_BYTES) return this.fail(messages);
        break;
      }
      messages.push(this.buf.slice(0, end).replace(/\r$/, ''));
      this.buf = this.buf.slice(end + 1);
    }
    return { messages, error: null };
  }

  /** Bytes held waiting for the rest of a frame. */
  get pending(): number {
    return this.buf.length;
  }

  private fail(messages: string[]): FrameResult {
    this.buf = '';
    return { messages, error: 'oversize' };
  }
}

/** A template's change-event patterns, compiled: `match(text)` says whether it is a change and who made it. */
export interface ChangeMatcher {
  match(text: string): { user: string | null } | null;
}

/**
 * Compiles change-event patterns. Built-in sources (`trusted`) run as JavaScript regexes; every other pattern with
 * RE2 (linear time: a custom pattern cannot stall the receiver under a flood). A pattern that does not compile is
 * skipped (the template page and `db check` report it). The named group `user` gives who changed the device.
 */
export function compileChangeEvents(patterns: readonly string[], trusted: (source: string) => boolean): ChangeMatcher {
  const tests: ((text: string) => { user: string | null } | null)[] = [];
  for (const source of patterns) {
    if (trusted(source)) {
      const re = new RegExp(source);
      tests.push((text) => {
        const m = re.exec(text);
        return m ? { user: cleanUser(m.groups?.user) } : null;
      });
      continue;
    }
    try {
      const re = compileRe2(source);
      const hasUser = 'user' in re.namedGroups();
      tests.push((text) => {
        const m = re.matcher(text);
        if (!m.find()) return null;
        return { user: hasUser ? cleanUser(m.group('user') ?? undefined) : null };
      });
    } catch {
      /* reported by patternProblems */
    }
  }
  return {
    match(text) {
      for (const t of tests) {
        const r = t(text);
        if (r) return r;
      }
      return null;
    },
  };
}

/** A user name as a device reported it: trimmed of quotes, at most 128 characters, null when empty or a placeholder. */
export function cleanUser(u: string | undefined | null): string | null {
  if (!u) return null;
  const s = u
    .replace(/^['"]|['"]$/g, '')
    .trim()
    .slice(0, 128);
  return s === '' || s === '**' || s === '-' ? null : s;
}
