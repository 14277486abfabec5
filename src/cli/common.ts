// Shared CLI plumbing: argument parsing with --config/--data-dir on every command, stdin secrets, output helpers.
import { userInfo } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { openAppliance, type Appliance } from '../app/bootstrap';
import { loadConfig, type ConfigFlags } from '../config/config';
import { formatTimestamp } from '../lib/time';
import { cliActor, type Actor } from '../identity/actor';
import { complianceIdle } from '../features/compliance/compliance-pending';

export class UsageError extends Error {}

/**
 * The exit codes of every command, one table: scripts can tell "you called it wrong" from "it ran and failed".
 * A name or id that does not exist is a failed operation (1), whatever the noun.
 */
export const EXIT = { OK: 0, FAILED: 1, USAGE: 2 } as const;

export const EXIT_CODES_HELP = `Exit codes (every command):
  0  done
  1  the operation failed or was refused: a backup or check failed, a device, user, role or key
     not found, a rule refused it, bad configuration, a running server in the way (one line on stderr)
  2  usage error: unknown command or option, a missing or malformed argument; nothing was done`;

export interface Command {
  name: string;
  summary: string;
  help: string;
  run(argv: string[]): Promise<number>;
}

export const GLOBAL_OPTIONS_HELP = `Options on every command:
  --config FILE      appliance.conf to read (or CONFVAULT_CONFIG)
  --data-dir DIR     data directory (or CONFVAULT_DATA_DIR; default ./data)
  -h, --help         this help

Exit codes: 0 done, 1 operation failed or refused, 2 usage error (see confvault --help).`;

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
    // Versions stored by this command are judged in the background: finish before the database closes.
    await complianceIdle(a.db).catch(() => undefined);
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

/**
 * Output whose reader went away (`confvault backup jobs --all | head -1`) is dropped quietly: an EPIPE on stdout or
 * stderr would otherwise end the process with an unhandled 'error' and a stack trace, whatever the command had done.
 * The command carries on and exits with the status of its work (a backup run still runs and records every device).
 * Installed once, by main, for every command and every write (out, err, process.stdout.write).
 */
export function dropOutputToClosedPipes(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EPIPE') throw e;
    });
  }
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

/**
 * The one-line message of a failed command: "confvault <command>: <message>", or "confvault <command> <sub>: ..."
 * when the message already names its subcommand ("backup run: give exactly one of ..."), never both prefixes.
 */
export function failureLine(command: string, message: string): string {
  return message.startsWith(`${command} `) && /^[a-z-]+ [a-z-]+(?: [a-z-]+)?: /.test(message) ? `confvault ${message}` : `confvault ${command}: ${message}`;
}

/** Run a command body, turning failures into one line on stderr and an exit code of the table above. */
export async function runCommand(cmd: Command, argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    out(cmd.help);
    return EXIT.OK;
  }
  try {
    return await cmd.run(argv);
  } catch (e) {
    if (e instanceof UsageError) {
      err(failureLine(cmd.name, e.message));
      err(`Try 'confvault ${cmd.name} --help'.`);
      return EXIT.USAGE;
    }
    // ConfigError, ApiError (not found, refused, conflict, invalid value) and any other failure: the operation failed.
    // A configuration with several mistakes names each on its own line.
    for (const line of (e as Error).message.split('\n')) err(failureLine(cmd.name, line));
    return EXIT.FAILED;
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
