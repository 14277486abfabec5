// Recorded vendor sessions that the simulators replay: the transcript format, its loader and checks.
import { readFileSync } from 'node:fs';

export interface TranscriptEnable {
  /** The command that raises the privilege: "enable" (default) or "super" (Huawei VRP, HPE Comware). */
  command?: string;
  /** The prompt before it; the same as `prompt` where the prompt does not show the level. */
  unprivileged_prompt: string;
  /** Asked first, then answered with the login's username (ProCurve's manager login). */
  username_prompt?: string;
  password: string;
  password_prompt: string;
  /** Printed after a wrong password, once, back at the prompt (VRP, Comware); absent: asked 3 times, like IOS. */
  refusal?: string;
  /** Printed when the privilege is granted (VRP's "Now user privilege is 3 level, ..."). */
  granted?: string;
  /** Commands of `commands` the unprivileged level may run too (IOS's "show version" is a level-1 command). */
  unprivileged_commands?: string[];
}

export interface TranscriptPaging {
  page_lines: number;
  more_prompt: string;
  disable_commands: string[];
  /** How the device wipes the more prompt after a key: backspaces (Cisco, default), "\r" + spaces, or "\r ESC[K". */
  erase?: 'backspace' | 'cr' | 'ansi';
  /** The more prompt follows the last line of a page with no line break ("...read systemvi--More--", TNSR). */
  glued?: boolean;
  /** Only these keys show the next page ("n"; "\r" and "\n" for a pager that wants Enter); others are ignored. Absent: any key. */
  next_keys?: string[];
}

/** The Telnet simulator's login questions for this device (when the simulator is not given its own). */
export interface TranscriptTelnet {
  login_prompt?: string;
  password_prompt?: string;
  /** Printed before the first login question; the device waits for Enter (any other input is ignored). */
  press_enter?: string;
}

/**
 * What the device sends when Enter ends a command line. `crlf` (default). `ansi_scroll`: ArubaOS-Switch 16.x
 * scrolls the screen with cursor addressing (delete the top row, insert one at the bottom, erase it) and sends
 * no CR/LF at all. `none`: nothing; the next prompt is drawn over the echo with cursor addressing.
 * Output that follows a `none` Enter starts with CR/LF.
 */
export type EnterEcho = 'crlf' | 'ansi_scroll' | 'none';

export interface Transcript {
  template: string;
  hostname: string;
  banner?: string;
  prompt: string;
  enable?: TranscriptEnable | null;
  paging?: TranscriptPaging | null;
  /** Command → output, LF line endings. */
  commands: Record<string, string>;
  unknown_command: string;
  exec?: boolean;
  enter_echo?: EnterEcho;
  telnet?: TranscriptTelnet;
  /**
   * The prompt counts commands (Extreme EXOS "X460.1 #", then "X460.2 #"): `{n}` in `prompt` and
   * `enable.unprivileged_prompt` shows this number at login, one more after every command line that is not empty.
   */
  prompt_counter?: number;
  /**
   * The CLI draws its prompt again as soon as Enter is pressed and erases it with this when the output comes (birdc's
   * readline while BIRD answers: "bird> ", then CR ESC[K with the output). Absent: the prompt comes after the output only.
   */
  busy_redraw?: string;
  username: string;
  password: string;
}

function fail(where: string, what: string): never {
  throw new Error(`transcript ${where}: ${what}`);
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(o: Record<string, unknown>, key: string, where: string, optional = false): void {
  const v = o[key];
  if (v === undefined && optional) return;
  if (typeof v !== 'string') fail(where, `"${key}" must be a string`);
}

/** Checks the shape of parsed JSON and returns it typed; errors name the file and the field. */
export function validateTranscript(data: unknown, where = '<inline>'): Transcript {
  if (!isRecord(data)) fail(where, 'top level must be an object');
  for (const key of ['template', 'hostname', 'prompt', 'unknown_command', 'username', 'password']) str(data, key, where);
  str(data, 'banner', where, true);
  if (!isRecord(data.commands)) fail(where, '"commands" must be an object of command → output');
  for (const [cmd, out] of Object.entries(data.commands)) {
    if (typeof out !== 'string') fail(where, `output of "${cmd}" must be a string`);
  }
  if (data.enable != null) {
    if (!isRecord(data.enable)) fail(where, '"enable" must be an object or null');
    for (const key of ['unprivileged_prompt', 'password', 'password_prompt']) str(data.enable, key, `${where} enable`);
    for (const key of ['command', 'username_prompt', 'refusal', 'granted']) {
      if (data.enable[key] !== undefined) str(data.enable, key, `${where} enable`);
    }
  }
  if (data.paging != null) {
    const p = data.paging;
    if (!isRecord(p)) fail(where, '"paging" must be an object or null');
    if (typeof p.page_lines !== 'number' || p.page_lines < 1) fail(where, '"paging.page_lines" must be a positive number');
    str(p, 'more_prompt', `${where} paging`);
    if (!Array.isArray(p.disable_commands) || p.disable_commands.some((c) => typeof c !== 'string')) {
      fail(where, '"paging.disable_commands" must be a list of strings');
    }
    if (p.erase !== undefined && !['backspace', 'cr', 'ansi'].includes(String(p.erase))) fail(where, '"paging.erase" must be backspace, cr or ansi');
    if (p.glued !== undefined && typeof p.glued !== 'boolean') fail(where, '"paging.glued" must be true or false');
    if (p.next_keys !== undefined && (!Array.isArray(p.next_keys) || p.next_keys.some((k) => typeof k !== 'string' || k.length !== 1))) {
      fail(where, '"paging.next_keys" must be a list of single characters');
    }
  }
  if (data.enter_echo !== undefined && !['crlf', 'ansi_scroll', 'none'].includes(String(data.enter_echo))) {
    fail(where, '"enter_echo" must be crlf, ansi_scroll or none');
  }
  if (data.prompt_counter !== undefined) {
    if (typeof data.prompt_counter !== 'number' || !Number.isInteger(data.prompt_counter) || data.prompt_counter < 0) {
      fail(where, '"prompt_counter" must be a whole number (the first value)');
    }
    if (!String(data.prompt).includes('{n}')) fail(where, '"prompt_counter" needs "{n}" in "prompt"');
  }
  str(data, 'busy_redraw', where, true);
  if (data.exec !== undefined && typeof data.exec !== 'boolean') fail(where, '"exec" must be true or false');
  if (data.telnet !== undefined) {
    if (!isRecord(data.telnet)) fail(where, '"telnet" must be an object');
    for (const key of ['login_prompt', 'password_prompt', 'press_enter']) str(data.telnet, key, `${where} telnet`, true);
  }
  return data as unknown as Transcript;
}

/** Reads and checks a transcript file (JSON). */
export function loadTranscript(path: string): Transcript {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new Error(`transcript ${path}: ${(err as Error).message}`);
  }
  return validateTranscript(data, path);
}
