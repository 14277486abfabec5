// `confvault audit list`: the audit trail on the console, filtered by time, actor and action; text or JSON lines.
import { listAuditFor } from '../features/audit/audit.service';
import { auditRowJson, describeChanges, describeDetails, describeDoor, parseAuditTime } from '../features/audit/audit-view';
import { formatTimestamp } from '../lib/time';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, flagsOf, out, parse, withAppliance, type Command } from './common';

const HELP = `Usage:
  confvault audit list [--since DATE] [--actor USER] [--action NAME] [--limit N] [--json]

list        The audit trail, newest first: who changed what, when, through which door.
            One line per row on stdout, tab-separated: time (appliance time zone), actor, door and its
            reference, action, target, changes ("field: before → after", secrets only as "changed"),
            details, request id. With --json, one JSON object per line instead (ISO 8601 UTC time).
  --since DATE   rows at or after DATE: YYYY-MM-DD or "YYYY-MM-DD HH:MM[:SS]" in the appliance's time
                 zone ([server] timezone), or ISO 8601 with a zone (2026-11-24T10:00:00Z)
  --actor USER   rows of this actor only (user name, cli:<os user>, system; case-insensitive)
  --action NAME  rows whose action is NAME or starts with it ("group." for every group change)
  --limit N      at most N rows (default 1000)

Rows older than [retention] keep_days are deleted by retention and 'confvault db prune'.

${GLOBAL_OPTIONS_HELP}`;

/** Tabs and line breaks inside a field would break the one-line-per-row format. */
function field(text: string): string {
  return text.replace(/[\t\r\n]+/g, ' ');
}

export const auditCommand: Command = {
  name: 'audit',
  summary: 'Read the audit trail',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      since: { type: 'string' },
      actor: { type: 'string' },
      action: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean' },
    });
    const [sub, ...extra] = positionals;
    if (sub !== 'list') throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    if (extra.length) throw new UsageError(`unexpected argument "${extra[0]}"`);
    // The format is checked before the appliance opens; the zone it is read in comes from the configuration.
    if (values.since !== undefined && parseAuditTime(values.since, 'UTC') === null) {
      throw new UsageError(`--since: "${values.since}" is not a date; use YYYY-MM-DD, "YYYY-MM-DD HH:MM[:SS]" or ISO 8601 with a zone`);
    }
    if (values.actor !== undefined && values.actor.trim() === '') throw new UsageError('--actor needs a user name');
    if (values.action !== undefined && values.action.trim() === '') throw new UsageError('--action needs an action name');
    let limit = 1000;
    if (values.limit !== undefined) {
      if (!/^\d+$/.test(values.limit) || Number(values.limit) < 1 || Number(values.limit) > 1_000_000) {
        throw new UsageError('--limit takes a whole number from 1 to 1000000');
      }
      limit = Number(values.limit);
    }
    return withAppliance(flagsOf(values), (a) => {
      const tz = a.config.server.timezone;
      const since = values.since === undefined ? undefined : (parseAuditTime(values.since, tz) ?? undefined);
      const { items } = listAuditFor(a.db, consoleActor().principal, { since, actor: values.actor?.trim(), action: values.action?.trim() }, 1, limit);
      for (const r of items) {
        if (values.json) {
          out(JSON.stringify(auditRowJson(r, tz)));
          continue;
        }
        out(
          [
            formatTimestamp(r.at, tz),
            r.actor,
            describeDoor(r),
            r.action,
            r.target || '-',
            describeChanges(r.changes).join('; ') || '-',
            describeDetails(r.details).join('; ') || '-',
            r.request_id ?? '-',
          ]
            .map(field)
            .join('\t'),
        );
      }
      return 0;
    });
  },
};
