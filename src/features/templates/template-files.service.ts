// Templates as files: the custom-template folder <data_dir>/templates/ loaded into the database (start, reload, SIGHUP), import, export and clone.
import path from 'node:path';
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import { authorize } from '../../identity/policy';
import { TEMPLATE_OPS } from './templates.policy';
import { checkTemplateText } from '../../templates/file-check';
import { readTemplateFolder, templateToYaml } from '../../templates/files';
import { isBuiltinTemplateName, type TemplateFieldError } from '../../templates/index';
import type { TemplateSpec } from '../../templates/types';
import { VERSION } from '../../version';
import { changesBetween, recordAudit } from '../audit/audit.service';
import {
  deleteTemplateRow,
  getTemplateRow,
  insertTemplateRow,
  listTemplateFileProblemRows,
  listTemplateSyncRows,
  replaceTemplateFileProblemRows,
  setTemplateSourceFile,
  settingsJson,
  toTemplateSpec,
  updateTemplateRow,
  type Template,
} from './templates.store';
import { createTemplate, getTemplate, specFields } from './templates.service';

/** The custom-template folder inside the data directory. */
export function templateFolder(dataDir: string): string {
  return path.join(dataDir, 'templates');
}

/** A file of the folder that is not in force as written, and why (field errors as `template validate` prints them). */
export interface TemplateFileProblem {
  path: string;
  errors: TemplateFieldError[];
}

export interface TemplateReloadResult {
  folder: string;
  /** Names of the file templates in force after the reload (new, changed or unchanged). */
  loaded: string[];
  created: string[];
  updated: string[];
  /** Templates whose file is gone and no device used. */
  removed: string[];
  /** Templates whose file is gone but devices still use: kept, read-only, until no device does (reported as problems too). */
  kept: { name: string; file: string; devices: number }[];
  problems: TemplateFileProblem[];
}

const MAX_FILE_BYTES = 256 * 1024;

/** The files of the folder checked one by one, before anything is written: the usable ones and the problems. */
function readFolder(folder: string): { valid: { path: string; spec: TemplateSpec }[]; problems: TemplateFileProblem[] } {
  const valid: { path: string; spec: TemplateSpec }[] = [];
  const problems: TemplateFileProblem[] = [];
  const byName = new Map<string, string>();
  for (const entry of readTemplateFolder(folder)) {
    if (entry.text === null) {
      problems.push({ path: entry.path, errors: [{ field: 'file', message: `cannot be read: ${entry.readError}` }] });
      continue;
    }
    if (Buffer.byteLength(entry.text) > MAX_FILE_BYTES) {
      problems.push({ path: entry.path, errors: [{ field: 'file', message: `is larger than ${MAX_FILE_BYTES / 1024} KiB` }] });
      continue;
    }
    const { spec, errors } = checkTemplateText(entry.text, entry.path);
    if (!spec) {
      problems.push({ path: entry.path, errors });
      continue;
    }
    const key = spec.name.toLowerCase();
    const first = byName.get(key);
    if (first) problems.push({ path: entry.path, errors: [{ field: 'name', message: `"${spec.name}" is already defined by ${first}` }] });
    else if (isBuiltinTemplateName(key))
      problems.push({ path: entry.path, errors: [{ field: 'name', message: `"${spec.name}" is the name of a built-in template` }] });
    else {
      byName.set(key, entry.path);
      valid.push({ path: entry.path, spec: specFields(spec) });
    }
  }
  return { valid, problems };
}

/**
 * Bring the file templates in the database in line with the folder, in one transaction with an audit row per
 * template created, updated or removed. A file that fails its checks is reported and leaves the version loaded
 * before in force; a template whose file is gone is removed unless devices use it (then it stays, read-only, and
 * is reported until they use another template). The database is what every process reads, so a reload by the CLI
 * is in force for a running server at once.
 */
export function reloadTemplateFiles(db: DB, actor: Actor, folder: string): TemplateReloadResult {
  authorize(actor, TEMPLATE_OPS.create);
  authorize(actor, TEMPLATE_OPS.update);
  authorize(actor, TEMPLATE_OPS.delete);
  const { valid, problems } = readFolder(folder);
  const result: TemplateReloadResult = { folder, loaded: [], created: [], updated: [], removed: [], kept: [], problems };
  db.transaction(() => {
    const now = Date.now();
    const rows = listTemplateSyncRows(db);
    const byName = new Map(rows.map((r) => [r.name.toLowerCase(), r]));
    const inForce = new Set<number>();
    for (const { path: file, spec } of valid) {
      const row = byName.get(spec.name.toLowerCase());
      if (!row) {
        const id = insertTemplateRow(db, spec, false, now, file);
        inForce.add(id);
        result.created.push(spec.name);
        recordAudit(db, actor, {
          action: 'template.create',
          target: `template ${id}`,
          changes: changesBetween(null, spec),
          details: { name: spec.name, file },
        });
      } else if (row.source_file === null) {
        problems.push({
          path: file,
          errors: [{ field: 'name', message: `"${spec.name}" is already the name of template ${row.id}, made through the API or web interface` }],
        });
        continue;
      } else {
        inForce.add(row.id);
        const before = toTemplateSpec(row);
        const changes = changesBetween(specFields(before), spec);
        if (row.spec !== settingsJson(spec) || row.name !== spec.name || row.vendor !== spec.vendor || row.description !== spec.description) {
          updateTemplateRow(db, row.id, spec, now);
          result.updated.push(spec.name);
          recordAudit(db, actor, { action: 'template.update', target: `template ${row.id}`, changes, details: { name: spec.name, file } });
        }
        if (row.source_file !== file) setTemplateSourceFile(db, row.id, file);
      }
      result.loaded.push(spec.name);
    }
    const failed = new Set(problems.map((p) => p.path));
    for (const row of rows) {
      // A file that fails its checks keeps its previous version in force.
      if (row.source_file === null || inForce.has(row.id) || failed.has(row.source_file)) continue;
      const devices = getTemplateRow(db, row.id)?.device_count ?? 0;
      if (devices > 0) {
        result.kept.push({ name: row.name, file: row.source_file, devices });
        const message = `is gone; template "${row.name}" stays in force while ${devices} device${devices === 1 ? '' : 's'} use it`;
        problems.push({ path: row.source_file, errors: [{ field: 'file', message }] });
        continue;
      }
      deleteTemplateRow(db, row.id);
      result.removed.push(row.name);
      recordAudit(db, actor, {
        action: 'template.delete',
        target: `template ${row.id}`,
        details: { name: row.name, vendor: row.vendor, file: row.source_file },
      });
    }
    replaceTemplateFileProblemRows(
      db,
      problems.map((p) => ({ path: p.path, errors: JSON.stringify(p.errors), reported_at: now })),
    );
  }).immediate();
  return result;
}

/** The problems the last reload reported, for the Templates page. */
export function listTemplateFileProblems(db: DB): (TemplateFileProblem & { reported_at: number })[] {
  return listTemplateFileProblemRows(db).map((r) => ({ path: r.path, errors: JSON.parse(r.errors) as TemplateFieldError[], reported_at: r.reported_at }));
}

/** A template by name (case-insensitive), as the CLI names them. */
export function getTemplateByName(db: DB, name: string): Template {
  const row = listTemplateSyncRows(db).find((r) => r.name.toLowerCase() === name.toLowerCase());
  if (!row) throw ApiError.notFound(`template "${name}"`);
  return getTemplate(db, row.id);
}

/** A template as a YAML file that `template import` and `template validate` accept, with its suggested file name. */
export function exportTemplateYaml(db: DB, id: number): { filename: string; yaml: string } {
  const t = getTemplate(db, id);
  const origin = t.source === 'builtin' ? 'built-in template' : t.source === 'file' ? `template loaded from ${t.source_file}` : 'custom template';
  const yaml = templateToYaml(specFields(t), [`confvault ${VERSION}: ${origin} "${t.name}". Check it with: confvault template validate FILE`]);
  return { filename: `${t.name}.yaml`, yaml };
}

/** `template import`: a template file's text created as a custom template (the checks of a reload, then those of the API). */
export function importTemplateYaml(db: DB, actor: Actor, text: string, file: string): Template {
  authorize(actor, TEMPLATE_OPS.create);
  const { spec, errors } = checkTemplateText(text, file);
  if (!spec) throw ApiError.validation(errors, `${file}: template validation failed`);
  return createTemplate(db, actor, spec);
}

/** A first free name of the form "<name>-custom", "<name>-custom-2", ... */
export function suggestCloneName(db: DB, name: string): string {
  const taken = new Set(listTemplateSyncRows(db).map((r) => r.name.toLowerCase()));
  const base = `${name}-custom`.slice(0, 56);
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`;
}

/** "Clone": an editable custom copy of any template (a built-in, typically), under a free name. */
export function cloneTemplate(db: DB, actor: Actor, id: number, name?: string): Template {
  authorize(actor, TEMPLATE_OPS.create);
  const source = getTemplate(db, id);
  const spec = specFields(source);
  return createTemplate(db, actor, { ...spec, name: name ?? suggestCloneName(db, source.name) });
}
