// CLI entry of the confvault executable: dispatches to one module per subcommand.
import { apikeyCommand } from './cli/apikey';
import { runCommand, type Command } from './cli/common';
import { dbCommand } from './cli/db';
import { initCommand } from './cli/init';
import { roleCommand } from './cli/role';
import { serveCommand } from './cli/serve';
import { userCommand } from './cli/user';
import { VERSION } from './version';

const COMMANDS: Command[] = [serveCommand, initCommand, userCommand, roleCommand, apikeyCommand, dbCommand];

function usage(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return `confvault ${VERSION}: backs up the configuration of network devices.

Usage: confvault <command> [options]

Commands:
${COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Every command takes --config FILE and --data-dir DIR, and --help.
  confvault --version     print the version
Environment: CONFVAULT_CONFIG, CONFVAULT_DATA_DIR, CONFVAULT_LISTEN, CONFVAULT_LOG_LEVEL, ... (see appliance.conf.example)`;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(usage() + '\n');
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`confvault ${VERSION}\n`);
    return 0;
  }
  const cmd = COMMANDS.find((c) => c.name === name);
  if (!cmd) {
    process.stderr.write(`confvault: unknown command "${name}"\n\n${usage()}\n`);
    return 2;
  }
  return runCommand(cmd, rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`confvault: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 1;
  },
);
