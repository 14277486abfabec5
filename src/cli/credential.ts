// `confvault credential ...`: list, show, add, update and remove device logins through the credentials service; secrets never on argv.
import { readFileSync } from 'node:fs';
import type { Appliance } from '../app/bootstrap';
import {
  createCredential,
  deleteCredential,
  getCredentialFor,
  listCredentialsFor,
  updateCredential,
  type CredentialPatch,
} from '../features/credentials/credentials.service';
import { CredentialCreateSchema, CredentialUpdateSchema, toCredentialDto, type CredentialDto } from '../features/credentials/credentials.schemas';
import { loadInventoryRefs } from '../features/devices/devices-import-refs';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, out, parse, readStdinSecret, withAppliance, type Command } from './common';

const HELP = `Usage:
  confvault credential list [--name TEXT] [--json]
  confvault credential show ID|NAME [--json]
  confvault credential add NAME [--username USER] [--description TEXT] [--group GROUP,GROUP | --anywhere]
                           [SECRET OPTIONS]
  confvault credential update ID|NAME [--name NEW] [--username USER] [--description TEXT]
                           [--group GROUP,GROUP | --anywhere] [SECRET OPTIONS] [--clear-SECRET]
  confvault credential remove ID|NAME

Secrets are never given on the command line (where ps and the shell history would show them): each comes
from a file, or one of them from standard input (its first line):
  --password-file FILE | --password-stdin
  --enable-secret-file FILE | --enable-secret-stdin
  --private-key-file FILE (OpenSSH or PEM)       --passphrase-file FILE | --passphrase-stdin
A secret file's final line break is not part of the secret. update: a secret not named keeps its value;
--clear-password, --clear-enable-secret, --clear-private-key (with its passphrase), --clear-passphrase clear one.

list     One line per credential, tab-separated: id, name, username, secrets set (password, enable,
         key, passphrase), usage scope (groups or "anywhere"), devices using it. --name: names containing TEXT.
show     The same facts of one credential (by id, or by name). Secrets are never printed, only whether set.
add      Creates a credential; prints its id on stdout. --group: the usage scope, the device groups
         (names, paths Parent/Child, or ids; subgroups included) whose devices may use it, so its
         secrets are sent only there; --anywhere: devices anywhere, ungrouped ones included. Neither:
         anywhere (the console's scope is all).
update   Changes the fields given. A new usage scope is refused while a device using the credential
         would be left outside it.
remove   Deletes a credential no device uses.
Every change is recorded in the audit trail with the OS user who ran the command; secrets appear there
only as "changed".

${GLOBAL_OPTIONS_HELP}`;

const SECRETS = ['password', 'enable-secret', 'private-key', 'passphrase'] as const;
type SecretOption = (typeof SECRETS)[number];
const FIELD: Record<SecretOption, 'password' | 'enable_secret' | 'private_key' | 'passphrase'> = {
  password: 'password',
  'enable-secret': 'enable_secret',
  'private-key': 'private_key',
  passphrase: 'passphrase',
};

function readSecretFile(file: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read the ${what} file ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  // A private key keeps its text; any other secret is one line.
  const value = what === 'private-key' ? text : text.replace(/\r?\n$/, '');
  if (value === '') throw new UsageError(`--${what}-file: ${file} is empty`);
  return value;
}

/** The secrets named by the options, from their files or (one of them) standard input; `--clear-X` as null. */
async function secretsOf(values: Record<string, unknown>, clearAllowed: boolean): Promise<CredentialPatch> {
  const fromStdin = SECRETS.filter((s) => values[`${s}-stdin`]);
  if (fromStdin.length > 1) throw new UsageError(`only one secret can come from standard input (${fromStdin.map((s) => `--${s}-stdin`).join(', ')})`);
  const patch: CredentialPatch = {};
  for (const s of SECRETS) {
    const file = values[`${s}-file`] as string | undefined;
    const stdin = values[`${s}-stdin`] === true;
    const clear = values[`clear-${s}`] === true;
    if ([file !== undefined, stdin, clear].filter(Boolean).length > 1) throw new UsageError(`give the ${s} one way only`);
    if (clear && !clearAllowed) throw new UsageError(`--clear-${s} is for update`);
    if (file !== undefined) patch[FIELD[s]] = readSecretFile(file, s);
    else if (stdin) patch[FIELD[s]] = await readStdinSecret(s);
    else if (clear) patch[FIELD[s]] = null;
  }
  return patch;
}

/** --group names/paths/ids as group ids, --anywhere as null; undefined when neither is given. */
function usageOf(a: Appliance, values: { group?: string; anywhere?: boolean }): number[] | null | undefined {
  if (values.group !== undefined && values.anywhere) throw new UsageError('give --group or --anywhere, not both');
  if (values.anywhere) return null;
  if (values.group === undefined) return undefined;
  const refs = loadInventoryRefs(a.db);
  return values.group
    .split(',')
    .map((g) => g.trim())
    .filter(Boolean)
    .map((g) => {
      const found = refs.group(g);
      if ('error' in found) throw new Error(found.error);
      return found.id;
    });
}

function findCredential(a: Appliance, ref: string | undefined): number {
  if (!ref) throw new UsageError('missing ID|NAME');
  const found = loadInventoryRefs(a.db).credential(ref);
  if ('error' in found) throw new Error(found.error);
  return found.id;
}

/** The schema the API validates with: one set of rules for every door. */
function checked<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } },
  body: object,
): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  throw new Error(`invalid credential: ${r.error.issues.map((i) => `${String(i.path[0] ?? 'body')}: ${i.message}`).join('; ')}`);
}

function line(c: CredentialDto): string {
  const set = [c.has_password && 'password', c.has_enable_secret && 'enable', c.has_private_key && 'key', c.has_passphrase && 'passphrase'].filter(Boolean);
  return [c.id, c.name, c.username || '-', set.join(',') || '-', c.group_ids === null ? 'anywhere' : c.group_ids.join(','), c.device_count].join('\t');
}

const SECRET_OPTIONS: Record<string, { type: 'string' | 'boolean' }> = Object.fromEntries(
  SECRETS.flatMap((s): [string, { type: 'string' | 'boolean' }][] => [
    [`${s}-file`, { type: 'string' as const }],
    [`${s}-stdin`, { type: 'boolean' as const }],
    [`clear-${s}`, { type: 'boolean' as const }],
  ]),
);

export const credentialCommand: Command = {
  name: 'credential',
  summary: 'Manage device logins (list, show, add, update, remove); secrets from files or stdin',
  help: HELP,
  async run(argv) {
    const parsed = parse(argv, {
      name: { type: 'string' },
      username: { type: 'string' },
      description: { type: 'string' },
      group: { type: 'string' },
      anywhere: { type: 'boolean' },
      json: { type: 'boolean' },
      ...SECRET_OPTIONS,
    });
    const values = parsed.values as { name?: string; username?: string; description?: string; group?: string; anywhere?: boolean; json?: boolean };
    const [sub, ref] = parsed.positionals;
    const flags = flagsOf(parsed.values);
    const v = parsed.values as Record<string, unknown>;
    switch (sub) {
      case 'list':
        return withAppliance(flags, (a) => {
          const tz = a.config.server.timezone;
          const items = [];
          for (let page = 1; ; page++) {
            const r = listCredentialsFor(a.db, consoleActor().principal, { page, limit: 100, q: values.name });
            items.push(...r.items.map((c) => toCredentialDto(c, tz)));
            if (page * 100 >= r.total) break;
          }
          if (values.json) out(JSON.stringify(items, null, 2));
          else for (const c of items) out(line(c));
          return 0;
        });
      case 'show':
        return withAppliance(flags, (a) => {
          const c = toCredentialDto(getCredentialFor(a.db, consoleActor().principal, findCredential(a, ref)), a.config.server.timezone);
          out(values.json ? JSON.stringify(c, null, 2) : line(c));
          return 0;
        });
      case 'add': {
        if (!ref) throw new UsageError('credential add: missing NAME');
        const secrets = await secretsOf(v, false);
        return withAppliance(flags, (a) => {
          const body = { name: ref, username: values.username, description: values.description, group_ids: usageOf(a, values), ...secrets };
          const c = createCredential(a.db, consoleActor(), a.secrets, checked(CredentialCreateSchema, body));
          err(`credential ${c.name} created (id ${c.id}, usable ${c.group_ids === null ? 'anywhere' : `in groups ${c.group_ids.join(',')}`})`);
          out(String(c.id));
          return 0;
        });
      }
      case 'update': {
        const secrets = await secretsOf(v, true);
        return withAppliance(flags, (a) => {
          const id = findCredential(a, ref);
          const body = { name: values.name, username: values.username, description: values.description, group_ids: usageOf(a, values), ...secrets };
          const c = updateCredential(a.db, consoleActor(), a.secrets, id, checked(CredentialUpdateSchema, body));
          err(`credential ${c.name} (id ${c.id}) updated`);
          return 0;
        });
      }
      case 'remove':
        return withAppliance(flags, (a) => {
          const id = findCredential(a, ref);
          deleteCredential(a.db, consoleActor(), id);
          err(`credential ${id} removed`);
          return 0;
        });
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    }
  },
};
