// Telnet transport: raw TCP, option negotiation (echo and suppress-go-ahead accepted, the rest refused), IAC sequences removed, plus the in-band login dialogue.
import type { Socket } from 'node:net';
import { CollectError } from '../types';
import { matchesAny, safePattern } from '../prompts';
import type { PromptSession, TerminalStream } from '../session';
import { connectTcp, describeEndpoint, formatSeconds, readInTurns } from './tcp';

const IAC = 255;
const DONT = 254;
const DO = 253;
const WONT = 252;
const WILL = 251;
const SB = 250;
const SE = 240;

type FilterState = 'data' | 'iac' | 'option' | 'sb' | 'sb-iac';

const ECHO = 1;
const SUPPRESS_GO_AHEAD = 3;

/**
 * Removes Telnet commands from the byte stream and negotiates the way interactive clients do: the device may echo
 * and suppress go-ahead (character at a time, which every CLI expects), every other option is refused. Refusing
 * SUPPRESS-GO-AHEAD too would be "old NVT line mode": BSD-derived telnetds (inetutils, as on many Linux-based
 * devices) then switch the terminal to canonical mode under a readline CLI that has just made it raw, and the
 * first command sent after the prompt vanishes (FRR's vtysh over Telnet lost about one session in five).
 * Answers only changes of state (RFC 1143), so a device repeating itself gets no reply and no loop.
 * Keeps state across chunk boundaries.
 */
export class TelnetFilter {
  private state: FilterState = 'data';
  private verb = 0;
  /** Options the device performs (its WILL we accepted with DO). */
  private readonly remote = new Set<number>();
  /** Options we perform (its DO we accepted with WILL). */
  private readonly local = new Set<number>();

  constructor(private readonly reply: (bytes: Buffer) => void) {}

  filter(chunk: Buffer): Buffer {
    if (this.state === 'data' && !chunk.includes(IAC)) return chunk;
    const out = Buffer.allocUnsafe(chunk.length);
    let n = 0;
    for (const b of chunk) {
      switch (this.state) {
        case 'data':
          if (b === IAC) this.state = 'iac';
          else out[n++] = b;
          break;
        case 'iac':
          if (b === IAC) {
            out[n++] = IAC; // escaped 0xff data byte
            this.state = 'data';
          } else if (b >= WILL && b <= DONT) {
            this.verb = b;
            this.state = 'option';
          } else {
            this.state = b === SB ? 'sb' : 'data'; // NOP, GA, AYT...: nothing to show
          }
          break;
        case 'option':
          this.negotiate(this.verb, b);
          this.state = 'data';
          break;
        case 'sb':
          if (b === IAC) this.state = 'sb-iac';
          break;
        case 'sb-iac':
          this.state = b === SE ? 'data' : 'sb';
          break;
      }
    }
    return out.subarray(0, n);
  }

  private negotiate(verb: number, option: number): void {
    switch (verb) {
      case WILL:
        if (this.remote.has(option)) return;
        if (option === ECHO || option === SUPPRESS_GO_AHEAD) {
          this.remote.add(option);
          this.reply(Buffer.from([IAC, DO, option]));
        } else {
          this.reply(Buffer.from([IAC, DONT, option]));
        }
        return;
      case WONT:
        if (this.remote.delete(option)) this.reply(Buffer.from([IAC, DONT, option]));
        return;
      case DO:
        if (this.local.has(option)) return;
        if (option === SUPPRESS_GO_AHEAD) {
          this.local.add(option);
          this.reply(Buffer.from([IAC, WILL, option]));
        } else {
          this.reply(Buffer.from([IAC, WONT, option]));
        }
        return;
      case DONT:
        if (this.local.delete(option)) this.reply(Buffer.from([IAC, WONT, option]));
        return;
    }
  }
}

/** Doubles 0xff bytes in outgoing data, as the protocol requires. */
function escapeIac(text: string): Buffer {
  const buf = Buffer.from(text, 'utf8');
  if (!buf.includes(IAC)) return buf;
  const out: number[] = [];
  for (const b of buf) {
    out.push(b);
    if (b === IAC) out.push(IAC);
  }
  return Buffer.from(out);
}

export interface TelnetOptions {
  host: string;
  port: number;
  connect_timeout_ms: number;
  signal?: AbortSignal;
  /** Called when the device sends its first bytes. */
  onReachable?: () => void;
}

export async function connectTelnet(o: TelnetOptions): Promise<TerminalStream> {
  const sock: Socket = await connectTcp({ host: o.host, port: o.port, timeout_ms: o.connect_timeout_ms, service: 'Telnet', signal: o.signal });
  sock.on('error', () => {
    // A reset shows up as 'close', which the session turns into DISCONNECTED.
  });
  sock.once('data', () => o.onReachable?.());
  const filter = new TelnetFilter((bytes) => {
    if (sock.writable) sock.write(bytes);
  });
  return {
    write: (text) => {
      if (sock.writable) sock.write(escapeIac(text));
    },
    onData: (listener) => {
      sock.on('data', (chunk: Buffer) => {
        const data = filter.filter(chunk);
        if (data.length) listener(data);
      });
      readInTurns(sock);
    },
    onClose: (listener) => {
      sock.once('close', listener);
    },
    close: () => {
      sock.end();
      // A device that ignores our FIN must not keep the socket open.
      setTimeout(() => sock.destroy(), 2000).unref();
    },
  };
}

/**
 * Answers the device's login and password questions (the template's `session` patterns, then the engine
 * defaults), and a line that wants Enter on the way, then returns once something prompt-like follows.
 * Devices without login go straight to their prompt, which is fine too.
 */
export async function loginTelnet(
  session: PromptSession,
  o: { host: string; port: number; username: string; password: string | null | undefined; template_prompt: string | null; login_timeout_ms: number },
): Promise<void> {
  const where = describeEndpoint(o.host, o.port);
  const custom = o.template_prompt ? safePattern(o.template_prompt) : null;
  const { vocabulary } = session;
  let sentUser = false;
  let sentPassword = false;
  let answeredAt = -1;
  const refused = () => new CollectError('AUTH_FAILED', `Authentication failed for user ${o.username} (telnet login).`, true);
  const outcome = await session.waitFor<'shell' | 'refused' | 'no-password'>(
    () => {
      if (session.bytes === answeredAt) return null; // nothing new since our last answer
      const line = session.currentLine;
      if (!line) return null;
      if (matchesAny(vocabulary.password, line)) {
        if (sentPassword) return { done: 'refused' };
        if (!o.password) return { done: 'no-password' };
        session.sendLine(o.password);
        sentPassword = true;
        answeredAt = session.bytes;
        return null;
      }
      if (matchesAny(vocabulary.username, line)) {
        if (sentPassword || sentUser) return { done: 'refused' };
        session.sendLine(o.username);
        sentUser = true;
        answeredAt = session.bytes;
        return null;
      }
      if (custom ? custom.test(line) : vocabulary.prompt.test(line)) return { done: 'shell' };
      const enter = vocabulary.pagers.find((p) => p.answer === null && p.re.test(line));
      if (enter) {
        session.sendLine('');
        answeredAt = session.bytes;
      }
      return null;
    },
    {
      idle_ms: o.login_timeout_ms,
      total_ms: o.login_timeout_ms,
      onIdle: () =>
        session.bytes === 0
          ? new CollectError('TIMEOUT', `Connected to ${where} but it sent nothing within ${formatSeconds(o.login_timeout_ms)} — is this a Telnet port?`, false)
          : sentPassword
            ? new CollectError('PROMPT_NOT_FOUND', `Logged in to ${where} but no CLI prompt was recognised within ${formatSeconds(o.login_timeout_ms)}.`, true)
            : new CollectError('PROMPT_NOT_FOUND', `No login prompt was recognised from ${where} within ${formatSeconds(o.login_timeout_ms)}.`, true),
      onClose: () =>
        sentPassword ? refused() : new CollectError('DISCONNECTED', `${where} closed the Telnet connection before login completed.`, session.bytes > 0),
    },
  );
  if (outcome === 'refused') throw refused();
  if (outcome === 'no-password') {
    throw new CollectError('AUTH_FAILED', `${where} asks for a password but none is configured for user ${o.username}.`, true);
  }
}
