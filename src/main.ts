// CLI entry of the confvault executable: dispatches to one module per subcommand.
import { EXIT_CODES_HELP, dropOutputToClosedPipes, runCommand, type Command } from './cli/common';
import { VERSION } from './version';

// Loaded on demand: `confvault user list` need not load the HTTP server, the engine and every route (half its start-up time).
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./cli/serve')).serveCommand,
  init: async () => (await import('./cli/init')).initCommand,
  user: async () => (await import('./cli/user')).userCommand,
  role: async () => (await import('./cli/role')).roleCommand,
  apikey: async () => (await import('./cli/apikey')).apikeyCommand,
  backup: async () => (await import('./cli/backup')).backupCommand,
  device: async () => (await import('./cli/device')).deviceCommand,
  credential: async () => (await import('./cli/credential')).credentialCommand,
  db: async () => (await import('./cli/db')).dbCommand,
  audit: async () => (await import('./cli/audit')).auditCommand,
  notify: async () => (await import('./cli/notify')).notifyCommand,
  template: async () => (await import('./cli/template')).templateCommand,
  compliance: async () => (await import('./cli/compliance')).complianceCommand,
  auth: async () => (await import('./cli/auth')).authCommand,
  'git-mirror': async () => (await import('./cli/git-mirror')).gitMirrorCommand,
  inventory: async () => (await import('./cli/inventory')).inventoryCommand,
  collector: async () => (await import('./cli/collector')).collectorCommand,
};

async function usage(): Promise<string> {
  const commands = await Promise.all(Object.values(COMMANDS).map((load) => load()));
  const width = Math.max(...commands.map((c) => c.name.length));
  return `confvault ${VERSION}: backs up the configuration of network devices.

Usage: confvault <command> [options]

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Every command takes --config FILE and --data-dir DIR, and --help.
  confvault --version     print the version and the Node.js runtime it runs on
Environment: CONFVAULT_CONFIG, CONFVAULT_DATA_DIR, CONFVAULT_LISTEN, CONFVAULT_LOG_LEVEL, ... (see appliance.conf.example)

${EXIT_CODES_HELP}`;
}

export async function main(argv: string[]): Promise<number> {
  dropOutputToClosedPipes();
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write((await usage()) + '\n');
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`confvault ${VERSION} (Node.js ${process.version})\n`);
    return 0;
  }
  const load = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!load) {
    process.stderr.write(`confvault: unknown command "${name}"\n\n${await usage()}\n`);
    return 2;
  }
  return runCommand(await load(), rest);
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
