// Shared CLI plumbing: argument parsing with --config/--data-dir on every command, stdin secrets, output helpers.
import { userInfo } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { openAppliance, type Appliance } from '../app/bootstrap';
import { ConfigError, loadConfig, type ConfigFlags } from '../config/config';
import { ApiError } from '../errors';
import { formatTimestamp } from '../lib/time';
import { cliActor, type Actor } from '../identity/actor';

export class UsageError extends Error {}

export interface Command {
  name: string;
  summary: string;
  help: string;
  run(argv: string[]): Promise<number>;
}

export const GLOBAL_OPTIONS_HELP = `Options on every command:
  --config FILE      appliance.conf to read (or CONFVAULT_CONFIG)
  --data-dir DIR     data directory (or CONFVAULT_DATA_DIR; default ./data)
  -h, --help         this help`;

type Options = NonNullable<ParseArgsConfig['options']>;

export function parse<O extends Options>(argv: string[], options: O, positionals = true) {
  try {
    return parseArgs({
      args: argv,
      options: { config: { type: 'string' }, 'data-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' }, ...options },
      allowPositionals: positionals,
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

export function flagsOf(values: { config?: unknown; 'data-dir'?: unknown; listen?: unknown }): ConfigFlags {
  return {
    config: values.config as string | undefined,
    dataDir: values['data-dir'] as string | undefined,
    listen: values.listen as string | undefined,
  };
}

export async function withAppliance<T>(flags: ConfigFlags, fn: (a: Appliance) => Promise<T> | T): Promise<T> {
  const a = openAppliance(flags, loadConfig(flags));
  try {
    return await fn(a);
  } finally {
    a.close();
  }
}

export async function readStdinSecret(what: string): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write(`${what}: `);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  const line = text.split(/\r?\n/)[0];
  if (!line) throw new UsageError(`${what}: nothing on standard input`);
  return line;
}

export function out(line: string): void {
  process.stdout.write(line + '\n');
}

export function err(line: string): void {
  process.stderr.write(line + '\n');
}

export function fmtTime(ms: number | null, tz: string): string {
  return ms === null ? '-' : formatTimestamp(ms, tz);
}

export function parseIdList(text: string, what: string): number[] {
  const ids = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!ids.length || ids.some((s) => !/^\d+$/.test(s))) throw new UsageError(`${what}: expected comma-separated numeric ids, got "${text}"`);
  return ids.map(Number);
}

/** Run a command body, turning known failures into one line on stderr and an exit code. */
export async function runCommand(cmd: Command, argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    out(cmd.help);
    return 0;
  }
  try {
    return await cmd.run(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      err(`confvault ${cmd.name}: ${e.message}`);
      err(`Try 'confvault ${cmd.name} --help'.`);
      return 2;
    }
    if (e instanceof ConfigError || e instanceof ApiError) {
      err(`confvault ${cmd.name}: ${e.message}`);
      return 1;
    }
    err(`confvault ${cmd.name}: ${(e as Error).message}`);
    return 1;
  }
}

/** The actor of a CLI command: the console's rights, recorded in the audit trail with the OS user who ran it. */
export function consoleActor(): Actor {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    name = `uid ${process.getuid?.() ?? '?'}`;
  }
  return cliActor(name);
}
