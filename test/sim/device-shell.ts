// The simulated device CLI shared by the SSH and Telnet simulators: echo, prompts, enable, paging, failures.
import type { Transcript } from './transcript';

export type SimFailure =
  | 'wrong_password' // every login is refused, as after a password change
  | 'disconnect_mid_output' // half the output of a command, then the connection drops
  | 'no_prompt' // banner, then nothing: input ignored, no prompt ever
  | 'stall_mid_output' // half the output, then silence with the connection open
  | 'huge_output' // every command answers with `huge_output_bytes` of filler
  | 'paging_stuck'; // paging cannot be turned off: disable commands are accepted and ignored

export interface SimDevice {
  /** Login name selecting this device when several devices share one port. */
  name: string;
  transcript: Transcript;
  /** Replaces the transcript's hostname in prompts, banner and output (1,000 distinct devices from one transcript). */
  hostname?: string;
  /** Credentials; default to the transcript's. */
  username?: string;
  password?: string;
  /** Accepted SSH login methods; default password and keyboard-interactive, plus publickey when a key is set. */
  auth_methods?: ('password' | 'keyboard-interactive' | 'publickey')[];
  /** OpenSSH public key line accepted for publickey login. */
  authorized_key?: string;
  /** Delay before each chunk of command output. */
  latency_ms?: number;
  /** Size of the output chunks (default 4096 bytes). */
  chunk_bytes?: number;
  failure?: SimFailure;
  /** Output size for the huge_output failure (default 64 MiB). */
  huge_output_bytes?: number;
  /** Extra or replacement command outputs (change a device's config between backups). */
  commands?: Record<string, string>;
  /** Exec mode: commands that exit with this status and print nothing. */
  exec_exit_codes?: Record<string, number>;
  /** A log line (like IOS "%LINK-3-UPDOWN") printed, with the prompt again, as each command arrives and before its echo. */
  unsolicited?: string;
}

/** Where the simulated CLI writes: an SSH channel or a Telnet socket. */
export interface DeviceIo {
  /** Resolves when the data is accepted (waits for 'drain' when the peer is slow). */
  write(data: string): Promise<void>;
  /** Orderly end of the session (exit command). */
  end(): void;
  /** The connection drops. */
  drop(): void;
  /** False once the client has gone: paced output must stop instead of sleeping on. */
  isOpen(): boolean;
}

class SessionClosed extends Error {}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * How long a busy_redraw prompt stays before it is erased and the output comes: longer than the short quiet moment
 * the engine gives a prompt under the echo of a command that prints nothing (40 ms), as BIRD's answer often is.
 */
const BUSY_REDRAW_MS = 80;
const never = () => new Promise<never>(() => undefined);

export function deviceUsername(d: SimDevice): string {
  return d.username ?? d.transcript.username;
}

export function devicePassword(d: SimDevice): string {
  return d.password ?? d.transcript.password;
}

function substitute(d: SimDevice, text: string): string {
  const from = d.transcript.hostname;
  return d.hostname && d.hostname !== from && from ? text.split(from).join(d.hostname) : text;
}

/** Output of a command as this device prints it (LF line endings), or undefined when it is unknown. */
export function deviceOutput(d: SimDevice, command: string): string | undefined {
  const out = d.commands?.[command] ?? d.transcript.commands[command];
  return out === undefined ? undefined : substitute(d, out);
}

/** Keystrokes from the client, read a line or a key at a time. */
export class LineInput {
  private buffer = '';
  private wake: (() => void) | null = null;
  private closed = false;
  /** A CR ended the last line: a following LF or NUL belongs to it. */
  private afterCr = false;

  feed(data: string): void {
    this.buffer += data;
    this.wake?.();
  }

  close(): void {
    this.closed = true;
    this.wake?.();
  }

  private async available(): Promise<void> {
    while (!this.buffer) {
      if (this.closed) throw new SessionClosed();
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = null;
    }
    if (this.afterCr && (this.buffer[0] === '\n' || this.buffer[0] === '\0')) this.buffer = this.buffer.slice(1);
    this.afterCr = false;
    if (!this.buffer) return this.available();
  }

  /** Resolves once a keystroke is waiting, without taking it. */
  async waitForInput(): Promise<void> {
    await this.available();
  }

  async readKey(): Promise<string> {
    await this.available();
    const key = this.buffer[0];
    this.buffer = this.buffer.slice(1);
    if (key === '\r') this.afterCr = true;
    return key;
  }

  /** Reads up to Enter, echoing what was typed when asked to (passwords are not echoed), and `enter` for Enter. */
  async readLine(echo: ((text: string) => Promise<void>) | null, enter = '\r\n'): Promise<string> {
    let line = '';
    for (;;) {
      await this.available();
      let shown = '';
      let i = 0;
      for (; i < this.buffer.length; i++) {
        const c = this.buffer[i];
        if (c === '\r' || c === '\n') break;
        if (c === '\x7f' || c === '\b') {
          if (line) {
            line = line.slice(0, -1);
            shown += '\b \b';
          }
        } else if (c >= ' ') {
          line += c;
          shown += c;
        }
      }
      const ended = i < this.buffer.length;
      if (ended) this.afterCr = this.buffer[i] === '\r';
      this.buffer = this.buffer.slice(ended ? i + 1 : i);
      if (echo && (shown || ended)) await echo(shown + (ended ? enter : ''));
      if (ended) return line;
    }
  }
}

/**
 * ArubaOS-Switch 16.x on Enter (24-row terminal): cursor to the top row, delete it, cursor to the bottom row,
 * insert a line there and erase it; no CR/LF. The shape is that of the sessions quoted in netmiko issues #1751
 * and #1819 (Aruba 2530/2930/3810: ESC[1;0H ESC[1M ESC[232;1H ESC[1L ... ESC[232;1H ESC[2K).
 */
export const ARUBA_SCROLL = '\x1b[1;0H\x1b[1M\x1b[24;1H\x1b[1L\x1b[24;1H\x1b[2K\x1b[24;1H\x1b[?25h';

const REDRAW_BOTTOM_ROW = '\x1b[24;1H\x1b[2K';

/** Keys that stop a paged output. */
const QUIT_KEYS = ['q', 'Q', '\x03'];

function enterEcho(t: Transcript): string {
  if (t.enter_echo === 'ansi_scroll') return ARUBA_SCROLL;
  if (t.enter_echo === 'none') return '';
  return '\r\n';
}

function crlf(text: string): string {
  return text.replace(/\r?\n/g, '\r\n');
}

function outputLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Runs one interactive CLI session until the client leaves or the connection drops. */
export class DeviceShell {
  private privileged: boolean;
  private paging: boolean;
  private breakPending = false;
  /** The number a counting prompt shows (transcript `prompt_counter`). */
  private counter: number;

  constructor(
    private readonly device: SimDevice,
    private readonly io: DeviceIo,
    private readonly input: LineInput,
    /** The account the session logged in with: a manager-username prompt (ProCurve) wants that same account. */
    private readonly loginUser: string = deviceUsername(device),
  ) {
    this.privileged = !device.transcript.enable;
    this.paging = !!device.transcript.paging;
    this.counter = device.transcript.prompt_counter ?? 0;
  }

  /** Output of a command whose Enter drew no line break starts with one (enter_echo "none"). */
  private write(text: string): Promise<void> {
    if (this.breakPending && text) {
      this.breakPending = false;
      return this.io.write('\r\n' + text);
    }
    return this.io.write(text);
  }

  private get prompt(): string {
    const t = this.device.transcript;
    let prompt = substitute(this.device, this.privileged || !t.enable ? t.prompt : t.enable.unprivileged_prompt);
    if (t.prompt_counter !== undefined) prompt = prompt.split('{n}').join(String(this.counter));
    // With no line break on Enter, the prompt is redrawn in place over the echo: bottom row, erase it, draw.
    return t.enter_echo === 'none' ? REDRAW_BOTTOM_ROW + prompt : prompt;
  }

  async run(): Promise<void> {
    try {
      const banner = substitute(this.device, this.device.transcript.banner ?? '');
      if (banner) await this.io.write(crlf(banner.endsWith('\n') ? banner : banner + '\n'));
      if (this.device.failure === 'no_prompt') return await never();
      await this.io.write(this.prompt);
      for (;;) {
        if (this.device.unsolicited) {
          await this.input.waitForInput();
          await this.io.write(`\r\n${this.device.unsolicited}\r\n${this.prompt}`);
        }
        const line = await this.input.readLine((text) => this.io.write(text), enterEcho(this.device.transcript));
        this.breakPending = this.device.transcript.enter_echo === 'none';
        await this.busyRedraw(line);
        await this.execute(line.trim());
        if (line.trim()) this.counter++;
        this.breakPending = false;
        await this.io.write(this.prompt);
      }
    } catch (err) {
      if (!(err instanceof SessionClosed)) throw err;
    }
  }

  /** The prompt drawn on Enter, and erased when the output comes (transcript `busy_redraw`). */
  private async busyRedraw(line: string): Promise<void> {
    const erase = this.device.transcript.busy_redraw;
    if (!erase || !line.trim() || /^(exit|quit|logout)$/.test(line.trim())) return;
    await this.io.write(this.prompt);
    await sleep(BUSY_REDRAW_MS);
    await this.io.write(erase);
  }

  private async execute(command: string): Promise<void> {
    const t = this.device.transcript;
    if (!command) return;
    if (/^(exit|quit|logout)$/.test(command)) {
      this.io.end();
      throw new SessionClosed();
    }
    if (t.enable && command === (t.enable.command ?? 'enable')) return this.enable(t.enable);
    if (t.paging?.disable_commands.includes(command)) {
      if (this.device.failure !== 'paging_stuck') this.paging = false;
      const out = deviceOutput(this.device, command);
      if (out) await this.write(crlf(out));
      return;
    }
    const out = deviceOutput(this.device, command);
    // Like IOS, an unprivileged session knows no capture commands, only the few the transcript lists (show version).
    if (out === undefined || (!this.privileged && !t.enable?.unprivileged_commands?.includes(command))) {
      await this.write(crlf(substitute(this.device, t.unknown_command)) + '\r\n');
      return;
    }
    await this.emit(out);
  }

  private async enable(spec: NonNullable<Transcript['enable']>): Promise<void> {
    if (this.privileged) {
      if (spec.granted) await this.write(crlf(spec.granted) + '\r\n');
      return;
    }
    if (spec.username_prompt) {
      await this.write(spec.username_prompt);
      const user = await this.input.readLine((text) => this.write(text));
      await this.write('\r\n');
      if (user !== this.loginUser) {
        await this.write(spec.refusal ? crlf(spec.refusal) + '\r\n' : 'Invalid username\r\n');
        return;
      }
    }
    for (let attempt = 0; attempt < (spec.refusal ? 1 : 3); attempt++) {
      await this.write(spec.password_prompt);
      const secret = await this.input.readLine(null);
      await this.write('\r\n');
      if (secret === spec.password) {
        this.privileged = true;
        if (spec.granted) await this.write(crlf(spec.granted) + '\r\n');
        return;
      }
    }
    await this.write(spec.refusal ? crlf(spec.refusal) + '\r\n' : '% Bad passwords\r\n');
  }

  /** Sends text in chunks, with the configured latency before each. */
  private async paced(text: string): Promise<void> {
    const latency = this.device.latency_ms ?? 0;
    const size = this.device.chunk_bytes ?? 4096;
    if (latency <= 0 && text.length <= size) return this.write(text);
    for (let i = 0; i < text.length; i += size) {
      if (latency > 0) await sleep(latency);
      if (!this.io.isOpen()) throw new SessionClosed();
      await this.write(text.slice(i, i + size));
    }
  }

  private async emit(output: string): Promise<void> {
    const failure = this.device.failure;
    if (failure === 'huge_output') return writeFiller(this.device.huge_output_bytes ?? 64 * 1024 * 1024, this.io, '\r\n');
    const lines = outputLines(output);
    if (failure === 'disconnect_mid_output' || failure === 'stall_mid_output') {
      await this.paced(lines.slice(0, Math.ceil(lines.length / 2)).join('\r\n') + '\r\n');
      if (failure === 'stall_mid_output') return never();
      this.io.drop();
      throw new SessionClosed();
    }
    const paging = this.device.transcript.paging;
    if (!paging || !this.paging || lines.length <= paging.page_lines) {
      if (lines.length) await this.paced(lines.join('\r\n') + '\r\n');
      return;
    }
    for (let i = 0; i < lines.length; i += paging.page_lines) {
      const last = i + paging.page_lines >= lines.length;
      // A glued more prompt sits right after the page's last line; the line break comes once it is wiped.
      const glued = paging.glued === true && !last;
      await this.paced(lines.slice(i, i + paging.page_lines).join('\r\n') + (glued ? '' : '\r\n'));
      if (last) break;
      await this.write(paging.more_prompt);
      let key = await this.input.readKey();
      // A pager that takes only its own keys ignores the others and keeps waiting.
      while (paging.next_keys && !paging.next_keys.includes(key) && !QUIT_KEYS.includes(key)) key = await this.input.readKey();
      await this.write(eraseSequence(paging.more_prompt, glued ? 'backspace' : (paging.erase ?? 'backspace')) + (glued ? '\r\n' : ''));
      if (QUIT_KEYS.includes(key)) break;
    }
  }
}

function eraseSequence(shown: string, style: 'backspace' | 'cr' | 'ansi'): string {
  const n = shown.length;
  if (style === 'cr') return '\r' + ' '.repeat(n) + '\r';
  if (style === 'ansi') return '\r\x1b[K';
  return '\b'.repeat(n) + ' '.repeat(n) + '\b'.repeat(n);
}

/** Writes `bytes` of configuration-looking filler, respecting backpressure through `write`. */
export async function writeFiller(bytes: number, io: DeviceIo, eol: string): Promise<void> {
  let sent = 0;
  let n = 0;
  while (sent < bytes) {
    let block = '';
    while (block.length < 65536) {
      block += `interface GigabitEthernet0/${n}${eol} description filler line for a very large configuration ${n}${eol}`;
      n++;
    }
    if (!io.isOpen()) throw new SessionClosed();
    await io.write(block);
    sent += block.length;
  }
}

/** Exec mode: runs one command, writes its output (LF), returns the exit status. */
export async function runDeviceExec(device: SimDevice, command: string, io: DeviceIo): Promise<number> {
  const t = device.transcript;
  const cmd = command.trim();
  const code = device.exec_exit_codes?.[cmd];
  if (code !== undefined) return code;
  if (t.paging?.disable_commands.includes(cmd)) return 0;
  const out = deviceOutput(device, cmd);
  if (out === undefined) {
    await io.write(substitute(device, t.unknown_command) + '\n');
    return 1;
  }
  if (device.failure === 'huge_output') {
    await writeFiller(device.huge_output_bytes ?? 64 * 1024 * 1024, io, '\n');
    return 0;
  }
  const latency = device.latency_ms ?? 0;
  const size = device.chunk_bytes ?? 4096;
  const text = device.failure === 'disconnect_mid_output' || device.failure === 'stall_mid_output' ? out.slice(0, Math.ceil(out.length / 2)) : out;
  for (let i = 0; i < text.length; i += size) {
    if (latency > 0) await sleep(latency);
    if (!io.isOpen()) throw new SessionClosed();
    await io.write(text.slice(i, i + size));
  }
  if (device.failure === 'stall_mid_output') return never();
  if (device.failure === 'disconnect_mid_output') {
    io.drop();
    throw new SessionClosed();
  }
  return 0;
}

export function isSessionClosed(err: unknown): boolean {
  return err instanceof SessionClosed;
}
