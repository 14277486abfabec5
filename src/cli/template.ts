// `confvault template ...`: list, show, export, import and validate template files, reload <data_dir>/templates/, try a template on a device.
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ApiError } from '../errors';
import type { FieldError } from '../errors';
import { tryTemplateOnDevice } from '../engine/template-trial';
import {
  exportTemplateYaml,
  getTemplateByName,
  importTemplateYaml,
  reloadTemplateFiles,
  templateFolder,
  type TemplateFileProblem,
} from '../features/templates/template-files.service';
import { listTemplatesFor } from '../features/templates/templates.service';
import { checkTemplateText } from '../templates/file-check';
import { GLOBAL_OPTIONS_HELP, UsageError, consoleActor, err, flagsOf, fmtTime, out, parse, withAppliance, type Command } from './common';

const HELP = `Usage:
  confvault template list
  confvault template show NAME
  confvault template export NAME [FILE]
  confvault template import FILE
  confvault template validate FILE
  confvault template reload
  confvault template try NAME --device ID

list      One line per template (tab-separated): id, name, source (builtin, custom or file),
          vendor, devices using it, file (for source file; "-" otherwise).
show      The template as YAML, after comment lines with its id, source, file and use.
export    The template as a YAML file that import and validate accept (stdout without FILE).
import    Creates a custom template from a YAML file ("-": standard input), checked as the API
          checks it; editable afterwards in the web interface and through the API.
validate  Checks a template file without touching the appliance: prints "FILE: ok (template NAME)",
          or one line per problem "FILE: FIELD: MESSAGE" and exits 1.
reload    Loads <data_dir>/templates/*.yaml (what confvault serve does at start and on SIGHUP) into
          the database, which a running server reads: no restart or signal needed. Prints one line
          per template created, updated, removed or kept, and per file not loaded ("FILE: FIELD: MESSAGE");
          a file not loaded leaves its previously loaded version in force. Exits 1 if any file was
          not loaded. A template whose file is removed goes too, unless devices use it: then it stays
          (read-only) until they use another template and the next reload.
try       Runs the template on one device as a backup would and prints the configuration as it
          would be stored on stdout (redacted as a backup is); stores nothing. Exits 1 if the
          collection failed (failure type and message on stderr).

File templates are read-only in the web interface and the API: edit the file and reload.
The JSON Schema of a template file is served at /schema/template.schema.json (for an editor's
"# yaml-language-server: $schema=URL" modeline). Changes are recorded in the audit log with the
OS user who ran the command (reload at start and on SIGHUP: the appliance itself).

${GLOBAL_OPTIONS_HELP}`;

function problemLines(file: string, errors: readonly FieldError[]): string[] {
  return errors.map((e) => `${file}: ${e.field}: ${e.message}`);
}

function readTemplateFile(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as Error).message}`);
  }
}

/** Write through a temporary file in the same folder, so a failed write never leaves half a template. */
function writeAtomically(file: string, text: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  writeFileSync(tmp, text, { mode: 0o644 });
  renameSync(tmp, file);
}

export const templateCommand: Command = {
  name: 'template',
  summary: 'Backup templates: list, show, export, import, validate, reload files, try on a device',
  help: HELP,
  async run(argv) {
    const { values, positionals } = parse(argv, { device: { type: 'string' } });
    const [sub, arg, extra] = positionals;
    const flags = flagsOf(values);
    const need = (v: string | undefined, what: string): string => {
      if (!v) throw new UsageError(`template ${sub}: missing ${what}`);
      return v;
    };
    const maxArgs = (n: number) => {
      if (positionals.length > n + 1) throw new UsageError(`template ${sub}: unexpected argument "${positionals[n + 1]}"`);
      if (values.device !== undefined && sub !== 'try') throw new UsageError(`template ${sub}: --device is an option of template try only`);
    };
    switch (sub) {
      case 'list':
        maxArgs(0);
        return withAppliance(flags, (a) => {
          for (const t of listTemplatesFor(a.db, consoleActor().principal, { page: 1, limit: 100_000 }).items) {
            out([t.id, t.name, t.source, t.vendor, t.device_count, t.source_file ?? '-'].join('\t'));
          }
          return 0;
        });
      case 'show': {
        const name = need(arg, 'NAME');
        maxArgs(1);
        return withAppliance(flags, (a) => {
          const t = getTemplateByName(a.db, name);
          out(
            `# id ${t.id}, source ${t.source}${t.source_file ? ` (${t.source_file})` : ''}, used by ${t.device_count} device${t.device_count === 1 ? '' : 's'}`,
          );
          out(`# created ${fmtTime(t.created_at, a.config.server.timezone)}, updated ${fmtTime(t.updated_at, a.config.server.timezone)}`);
          process.stdout.write(exportTemplateYaml(a.db, t.id).yaml);
          return 0;
        });
      }
      case 'export': {
        const name = need(arg, 'NAME');
        maxArgs(2);
        return withAppliance(flags, (a) => {
          const { yaml } = exportTemplateYaml(a.db, getTemplateByName(a.db, name).id);
          if (extra === undefined || extra === '-') process.stdout.write(yaml);
          else {
            writeAtomically(extra, yaml);
            err(`template ${name} written to ${extra}`);
          }
          return 0;
        });
      }
      case 'validate': {
        const file = need(arg, 'FILE');
        maxArgs(1);
        const { spec, errors } = checkTemplateText(readTemplateFile(file), file);
        if (!spec) {
          for (const line of problemLines(file, errors)) err(line);
          return 1;
        }
        out(`${file}: ok (template ${spec.name})`);
        return 0;
      }
      case 'import': {
        const file = need(arg, 'FILE');
        maxArgs(1);
        const text = readTemplateFile(file);
        return withAppliance(flags, (a) => {
          try {
            const t = importTemplateYaml(a.db, consoleActor(), text, file);
            err(`template ${t.name} imported (id ${t.id})`);
            return 0;
          } catch (e) {
            if (!(e instanceof ApiError) || e.code !== 'VALIDATION_ERROR') throw e;
            for (const line of problemLines(file, (e.details.errors as FieldError[] | undefined) ?? [])) err(line);
            return 1;
          }
        });
      }
      case 'reload':
        maxArgs(0);
        return withAppliance(flags, (a) => {
          const r = reloadTemplateFiles(a.db, consoleActor(), templateFolder(a.dataDir));
          for (const n of r.created) out(`created ${n}`);
          for (const n of r.updated) out(`updated ${n}`);
          for (const n of r.removed) out(`removed ${n}`);
          for (const k of r.kept) out(`kept ${k.name}: its file ${k.file} is gone, but ${k.devices} device${k.devices === 1 ? '' : 's'} use it`);
          // A kept template is reported on the Templates page too, but it is no file that failed to load.
          const failed: TemplateFileProblem[] = r.problems.filter((p) => !r.kept.some((k) => k.file === p.path));
          for (const p of failed) for (const line of problemLines(p.path, p.errors)) err(line);
          out(`${r.loaded.length} template file${r.loaded.length === 1 ? '' : 's'} in force from ${r.folder}; ${failed.length} not loaded`);
          return failed.length ? 1 : 0;
        });
      case 'try': {
        const name = need(arg, 'NAME');
        maxArgs(1);
        const device = need(values.device, '--device ID');
        if (!/^\d+$/.test(device)) throw new UsageError('template try: --device takes a numeric id');
        return withAppliance(flags, async (a) => {
          const t = getTemplateByName(a.db, name);
          const trial = await tryTemplateOnDevice(a, consoleActor(), t.id, t, Number(device));
          const r = trial.result;
          if (!r.ok) {
            err(`template ${t.name} on ${trial.deviceName}: ${r.failure}: ${r.message}; nothing stored`);
            return 1;
          }
          process.stdout.write(r.text.endsWith('\n') || r.text === '' ? r.text : `${r.text}\n`);
          err(`template ${t.name} on ${trial.deviceName}: ok in ${r.duration_ms} ms; nothing stored`);
          return 0;
        });
      }
      default:
        throw new UsageError(sub ? `unknown subcommand "${sub}"` : 'missing subcommand');
    }
  },
};
