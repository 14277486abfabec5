// `confvault device ...`: list, show, add, detect, retire, reactivate and delete devices; import a CSV or an Oxidized router.db; export the inventory as CSV.
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Appliance } from '../app/bootstrap';
import { deviceSchedule, exportDevicesCsv, getInventoryDevice, listInventory, type InventoryDevice } from '../features/devices/devices-csv.service';
import { CSV_COLUMNS, DEFAULT_ROUTER_DB_FIELDS, IMPORT_LIMITS, LOGIN_COLUMNS } from '../features/devices/devices-csv';
import {
  IMPORT_FORMATS,
  IMPORT_MODES,
  addDeviceFromFields,
  applyDeviceImport,
  previewDeviceImport,
  type ImportFormat,
  type ImportMode,
  type ImportReport,
} from '../features/devices/devices-import.service';
import { toDeviceDto } from '../features/devices/devices.schemas';
import { deleteDeviceConfirmed, reactivateDevice, retireDevice } from '../features/devices/devices-retire.service';
import { heldDevices } from '../features/devices/device-holds.service';
import { getGroup } from '../features/groups/groups.service';
import { SCOPE_ALL } from '../identity/principal';
import { DETECT_HELP, autoDeviceFields, runDeviceDetect } from './device-detect';
import { detectImportRows } from '../engine/device-detect';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, fmtTime, out, parse, withAppliance, type Command } from './common';

const HELP = `Usage:
  confvault device list [--group ID] [--json]
  confvault device show ID|NAME [--json]
  confvault device add --name NAME --hostname HOST --credential CRED --template TPL [--port N]
                       [--protocol ssh|telnet] [--group GROUP] [--description TEXT] [--schedule CRON] [--disabled]
  confvault device import FILE [--dry-run] [--mode all|valid] [--format csv|router.db] [--credential CRED]
                       [--fields LAYOUT] [--logins [--cloginrc FILE]] [--update]
  confvault device export [FILE] [--group ID]
  confvault device detect ID|NAME|--all [--json] [--dry-run]
  confvault device retire ID|NAME
  confvault device reactivate ID|NAME
  confvault device delete ID|NAME --confirm NAME

list     One line per device, tab-separated: id, name, hostname, template, group, last backup
         (ok|failed|never) and its time. --group: that group and its subgroups. --json: an array of
         the API's device objects with group, credential and template names added.
show     Every fact of one device (by id, or by name): address, template, credential, group, the
         schedule it is backed up on, SSH host key fingerprint, reachability, last backup.
add      Creates a device (the API's rules). CRED, TPL and GROUP are names (or ids; a group may be
         given as its path, Parent/Child). Prints the new id on stdout. --template auto and/or
         --credential auto: detected first, as 'device detect' does (a named credential is tried first).
import   Creates (with --update, also updates) the devices of FILE (- for standard input): a CSV
         whose header line names its columns, of
         ${CSV_COLUMNS.join(', ')}
         (only name and hostname are required), and the login columns ${LOGIN_COLUMNS.join(', ')}; or an
         Oxidized router.db (--format router.db, the
         default for a file named router.db). Every row is checked as 'device add' checks it, names
         already in use (or twice in the file) included; a bad row is printed as "row N: field: message".
         --mode all (default): nothing is written unless every row is valid.
         --mode valid: the valid rows are created, the others printed.
         --dry-run: check and print, write nothing.
         --credential: the credential of a router.db's devices (required unless --logins), and of CSV
         rows whose credential cell is empty and that carry no login.
         "auto" as a row's template (a router.db's model) or credential, or as --credential: each such
         row is detected first, as 'device detect' does ("row N: detected: ..." on stderr); a row
         nothing was detected for is refused with the reason.
         Logins (a CSV's login cells; a router.db's username, password and enable fields with --logins,
         never read without it) become encrypted credentials: the one the credential cell names (reused
         when it holds the same login, created when none has that name), else <username>@<group>, one per
         login and group, usable by that group's devices. Secrets are never printed.
         --cloginrc: with --logins, RANCID's .cloginrc gives the login of router.db lines without one
         (its add user, add password USER-PW ENABLE-PW and add method lines; first matching glob wins).
         A RANCID 3 router.db (name;type;state) is read with --fields name:model:skip.
         --fields: a router.db's layout as Oxidized's source map (default ${DEFAULT_ROUTER_DB_FIELDS}; for
         example name:ip:model:username:password:enable). Oxidized models map to templates (ios to
         cisco-ios, junos to juniper-junos, ...); groups must exist.
         --update: a row naming an existing device updates it: its non-empty cells are set, empty
         ones left as they are (without --update such a row is bad). At most ${IMPORT_LIMITS.rows} rows and
         ${IMPORT_LIMITS.bytes / 1024 / 1024} MiB per file. The devices written are printed on stdout, tab-separated: id, name,
         created|updated|unchanged. Exits 1 when any row is bad.
${DETECT_HELP}
retire   Takes the device out of service and keeps its history: its versions stay readable, searchable and
         diffable; it is disabled, off every schedule and probe, and 'backup run --all' skips it.
reactivate
         Puts a retired device back in service, enabled.
delete   Deletes the device AND every one of its backup records (no undo). --confirm must repeat its name.
export   Writes the inventory as CSV (the import's columns, names not ids) to FILE or standard output.
         --group: that group and its subgroups. 'device import' reads it back.

Every change is recorded in the audit trail with the OS user who ran the command.

${GLOBAL_OPTIONS_HELP}`;

function groupOption(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d{1,15}$/.test(v)) throw new UsageError('--group takes a numeric group id');
  return Number(v);
}

function lastBackup(d: InventoryDevice, tz: string): [string, string] {
  if (!d.last_backup) return ['never', '-'];
  return [d.last_backup.success ? 'ok' : 'failed', fmtTime(d.last_backup.started_at, tz)];
}

function jsonOf(d: InventoryDevice, tz: string) {
  return { ...toDeviceDto(d, tz), group: d.group, credential: d.credential, template: d.template };
}

function showLines(a: Appliance, d: InventoryDevice): string[] {
  const tz = a.config.server.timezone;
  const schedule = deviceSchedule(a.db, d, a.config.backup.schedule);
  const [status, at] = lastBackup(d, tz);
  return [
    `id:            ${d.id}`,
    `name:          ${d.name}`,
    `address:       ${d.protocol}://${d.hostname}:${d.port}`,
    `group:         ${d.group === null ? '- (ungrouped)' : `${d.group} (id ${d.group_id})`}`,
    `template:      ${d.template} (id ${d.template_id})`,
    `credential:    ${d.credential} (id ${d.credential_id})`,
    `enabled:       ${d.enabled ? 'yes' : 'no'}`,
    `retired:       ${d.retired ? `yes, at ${fmtTime(d.retired.at, tz)} by ${d.retired.by ?? '?'} (history kept, never backed up)` : 'no'}`,
    `held:          ${heldDevices(a.db, [d.id]).has(d.id) ? 'yes: backups wait until a user entitled to the credential approves the address (web page)' : 'no'}`,
    `schedule:      ${schedule ? `${schedule.expr} (${schedule.source === 'device' ? 'its own' : 'inherited'})` : '- (disabled: never backed up)'}`,
    `host key:      ${d.host_key ?? '- (none recorded yet)'}${d.accept_host_key_change ? ' (a changed key is approved for the next backup)' : ''}`,
    `reachability:  ${d.reachability.status}${d.reachability.checked_at !== null ? ` at ${fmtTime(d.reachability.checked_at, tz)}` : ''}${d.reachability.error ? `: ${d.reachability.error}` : ''}`,
    `last backup:   ${status}${d.last_backup ? ` at ${at} (${d.last_backup.id})` : ''}`,
    `description:   ${d.description || '-'}`,
    `created:       ${fmtTime(d.created_at, tz)}`,
    `updated:       ${fmtTime(d.updated_at, tz)}`,
  ];
}

function readInput(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

const ACTION_WORD = { create: 'created', update: 'updated', unchanged: 'unchanged' } as const;

function printReport(r: ImportReport, dryRun: boolean): number {
  for (const row of r.rows) {
    for (const e of row.errors) err(`row ${row.row}: ${e.field}: ${e.message}`);
    if (row.deviceId !== null && row.action) out(`${row.deviceId}\t${row.name}\t${ACTION_WORD[row.action]}`);
  }
  const held = r.rows.filter((x) => x.held).length;
  const heldNote = held ? `; ${held} held until a user entitled to their credential approves them` : '';
  if (dryRun) err(`dry run: ${r.valid} valid, ${r.invalid} invalid; nothing written${heldNote}`);
  else if (r.created + r.updated === 0 && r.invalid > 0)
    err(`${r.invalid} invalid row(s) of ${r.rows.length}: nothing written (--mode valid creates the valid ones)`);
  else err(`${r.created} device(s) created, ${r.updated} updated${r.invalid ? `, ${r.invalid} invalid row(s) left out` : ''}${heldNote}`);
  return r.invalid > 0 ? 1 : 0;
}

export const deviceCommand: Command = {
  name: 'device',
  summary: 'List, show, add, retire and delete devices; import a CSV or Oxidized router.db; export CSV',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      group: { type: 'string' },
      json: { type: 'boolean' },
      name: { type: 'string' },
      hostname: { type: 'string' },
      port: { type: 'string' },
      protocol: { type: 'string' },
      credential: { type: 'string' },
      template: { type: 'string' },
      description: { type: 'string' },
      schedule: { type: 'string' },
      disabled: { type: 'boolean' },
      'dry-run': { type: 'boolean' },
      mode: { type: 'string' },
      format: { type: 'string' },
      fields: { type: 'string' },
      update: { type: 'boolean' },
      logins: { type: 'boolean' },
      cloginrc: { type: 'string' },
      all: { type: 'boolean' },
      confirm: { type: 'string' },
    });
    const [sub, arg, extra] = positionals;
    const flags = flagsOf(values);
    if (extra !== undefined) throw new UsageError(`device ${sub}: unexpected argument "${extra}"`);
    switch (sub) {
      case 'list': {
        if (arg !== undefined) throw new UsageError(`device list: unexpected argument "${arg}"`);
        const groupId = groupOption(values.group);
        return withAppliance(flags, (a) => {
          if (groupId !== undefined) getGroup(a.db, SCOPE_ALL, groupId);
          const tz = a.config.server.timezone;
          const devices = listInventory(a.db, SCOPE_ALL, { group_id: groupId });
          if (values.json)
            out(
              JSON.stringify(
                devices.map((d) => jsonOf(d, tz)),
                null,
                2,
              ),
            );
          else for (const d of devices) out([d.id, d.name, d.hostname, d.template, d.group ?? '-', ...lastBackup(d, tz)].join('\t'));
          return 0;
        });
      }
      case 'show': {
        if (!arg) throw new UsageError('device show: missing ID or NAME');
        return withAppliance(flags, (a) => {
          const d = getInventoryDevice(a.db, SCOPE_ALL, arg);
          if (values.json) out(JSON.stringify(jsonOf(d, a.config.server.timezone), null, 2));
          else for (const line of showLines(a, d)) out(line);
          return 0;
        });
      }
      case 'add': {
        if (arg !== undefined) throw new UsageError(`device add: unexpected argument "${arg}" (give the name with --name)`);
        for (const [v, flag] of [
          [values.name, '--name'],
          [values.hostname, '--hostname'],
          [values.credential, '--credential'],
          [values.template, '--template'],
        ] as const) {
          if (!v) throw new UsageError(`device add: ${flag} is required`);
        }
        return withAppliance(flags, async (a) => {
          const fields = await autoDeviceFields(a, values);
          const d = addDeviceFromFields(a.db, consoleActor(), {
            name: values.name,
            hostname: values.hostname,
            port: values.port,
            protocol: values.protocol,
            group: values.group,
            credential: fields.credential,
            template: fields.template,
            enabled: values.disabled ? 'false' : undefined,
            description: values.description,
            schedule: values.schedule,
          });
          err(`device ${d.name} created (id ${d.id})`);
          out(String(d.id));
          return 0;
        });
      }
      case 'import': {
        if (!arg) throw new UsageError('device import: missing FILE (- for standard input)');
        const mode = (values.mode ?? 'all') as ImportMode;
        if (!IMPORT_MODES.includes(mode)) throw new UsageError(`device import: --mode is ${IMPORT_MODES.join(' or ')}`);
        const format = (values.format ?? (basename(arg) === 'router.db' ? 'router.db' : 'csv')) as ImportFormat;
        if (!IMPORT_FORMATS.includes(format)) throw new UsageError(`device import: --format is ${IMPORT_FORMATS.join(' or ')}`);
        if (values.fields !== undefined && format !== 'router.db') throw new UsageError('device import: --fields is for --format router.db');
        if (values.logins && format !== 'router.db')
          throw new UsageError('device import: --logins is for --format router.db (a CSV’s login columns are always read)');
        if (values.cloginrc !== undefined && !values.logins) throw new UsageError('device import: --cloginrc needs --logins');
        const text = readInput(arg);
        const cloginrc = values.cloginrc === undefined ? undefined : readInput(values.cloginrc);
        return withAppliance(flags, async (a) => {
          const source = {
            format,
            text,
            credential: values.credential,
            fields: values.fields,
            update: values.update === true,
            logins: values.logins,
            cloginrc,
            secrets: a.secrets,
          };
          const detected = await detectImportRows(a, consoleActor(), source);
          for (const [row, d] of detected) err(`row ${row}: detected: ${'error' in d ? d.error : `${d.template} with credential ${d.credential}`}`);
          const checked = { ...source, detected };
          const dryRun = values['dry-run'] === true;
          const report = dryRun ? previewDeviceImport(a.db, consoleActor(), checked) : applyDeviceImport(a.db, consoleActor(), checked, mode);
          return printReport(report, dryRun);
        });
      }
      case 'export': {
        const groupId = groupOption(values.group);
        return withAppliance(flags, (a) => {
          if (groupId !== undefined) getGroup(a.db, SCOPE_ALL, groupId);
          const { csv, devices } = exportDevicesCsv(a.db, SCOPE_ALL, { group_id: groupId });
          if (arg === undefined || arg === '-') process.stdout.write(csv);
          else {
            writeFileSync(arg, csv);
            err(`${devices} device(s) written to ${arg}`);
          }
          return 0;
        });
      }
      case 'detect':
        return withAppliance(flags, (a) =>
          runDeviceDetect(a, { arg, all: values.all === true, json: values.json === true, dryRun: values['dry-run'] === true }),
        );
      case 'retire':
      case 'reactivate':
      case 'delete': {
        if (!arg) throw new UsageError(`device ${sub}: missing ID or NAME`);
        if (sub === 'delete' && values.confirm === undefined) throw new UsageError('device delete: --confirm NAME is required (it deletes the history too)');
        return withAppliance(flags, (a) => {
          const d = getInventoryDevice(a.db, SCOPE_ALL, arg);
          if (sub === 'delete') {
            deleteDeviceConfirmed(a.db, consoleActor(), d.id, values.confirm ?? '');
            err(`device ${d.name} and its backup records deleted`);
          } else if (sub === 'retire') {
            retireDevice(a.db, consoleActor(), d.id);
            err(`device ${d.name} retired: its history is kept, it is no longer backed up`);
          } else {
            reactivateDevice(a.db, consoleActor(), d.id);
            err(`device ${d.name} reactivated and enabled`);
          }
          return 0;
        });
      }
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    }
  },
};
