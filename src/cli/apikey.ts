// `confvault apikey ...`: create (plaintext shown once, last line of stdout), list, revoke API keys.
import { createApiKey, listApiKeys, revokeApiKey, type ApiKeyInfo } from '../features/apikeys/apikeys.service';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, fmtTime, out, parse, withAppliance, type Command } from './common';

export function keyLine(k: ApiKeyInfo, tz: string): string {
  return [k.id, k.name || '-', k.prefix, k.owner, fmtTime(k.created_at, tz), fmtTime(k.last_used_at, tz), fmtTime(k.expires_at, tz), k.state].join('\t');
}

export const apikeyCommand: Command = {
  name: 'apikey',
  summary: 'Manage API keys for /api/v1 (create, list, revoke)',
  help: `Usage:
  confvault apikey create USERNAME [--name NAME] [--expires-in-days N]
  confvault apikey list [USERNAME]
  confvault apikey revoke ID

create   Makes a key that acts as USERNAME (their role and device-group scope). The plaintext
         key is the last line of stdout and is shown only this once; only its hash is stored.
list     One line per key, tab-separated: id, name, display prefix, owner, created, last used,
         expires, state (active, expired, revoked, exposed: revoked because it was
         sent in a URL). "-" stands for none.
revoke   The key is refused from the next request on, also by a running server. A key revoked
         before says so ("was already revoked at TIME; nothing changed") and exits 0.

${GLOBAL_OPTIONS_HELP}`,
  async run(argv) {
    const { values, positionals } = parse(argv, { name: { type: 'string' }, 'expires-in-days': { type: 'string' } });
    const [sub, arg] = positionals;
    const flags = flagsOf(values);
    switch (sub) {
      case 'create': {
        if (!arg) throw new UsageError('apikey create: missing USERNAME');
        const days = values['expires-in-days'];
        if (days !== undefined && !/^\d+$/.test(days)) throw new UsageError('--expires-in-days takes a whole number');
        return withAppliance(flags, (a) => {
          const { key, info } = createApiKey(a.db, consoleActor(), {
            username: arg,
            name: values.name,
            expiresInDays: days === undefined ? null : Number(days),
          });
          err('Store this key now: it is shown only once and cannot be recovered.');
          out(keyLine(info, a.config.server.timezone));
          out(key);
          return 0;
        });
      }
      case 'list':
        return withAppliance(flags, (a) => {
          for (const k of listApiKeys(a.db, arg)) out(keyLine(k, a.config.server.timezone));
          return 0;
        });
      case 'revoke': {
        if (!arg || !/^\d+$/.test(arg)) throw new UsageError('apikey revoke: missing or non-numeric ID');
        return withAppliance(flags, (a) => {
          const before = listApiKeys(a.db).find((k) => k.id === Number(arg));
          const k = revokeApiKey(a.db, consoleActor(), Number(arg));
          // Revoking twice changes nothing and says so (the key stays refused; exit 0: the wanted state holds).
          if (before?.revoked_at != null) {
            err(
              `API key ${k.id} (${k.prefix}…, owner ${k.owner}) was already revoked at ${fmtTime(before.revoked_at, a.config.server.timezone)}; nothing changed`,
            );
          } else err(`API key ${k.id} (${k.prefix}…, owner ${k.owner}) revoked`);
          return 0;
        });
      }
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    }
  },
};
