// `serve`'s custom-template folder: loaded at start and again on SIGHUP, each reload logged (one warning per file not loaded).
import type { Logger } from 'pino';
import type { DB } from '../../db/open';
import { SYSTEM_ACTOR } from '../../identity/actor';
import { reloadTemplateFiles, templateFolder, type TemplateReloadResult } from './template-files.service';

/** Log lines of one reload: a summary, and a warning per problem file with its field errors. */
export function logTemplateReload(log: Logger, r: TemplateReloadResult, trigger: string): void {
  const { folder, loaded, created, updated, removed, kept, problems } = r;
  log.info(
    { trigger, folder, loaded: loaded.length, created, updated, removed, kept: kept.map((k) => k.name), problems: problems.length },
    'template files loaded',
  );
  for (const p of problems) log.warn({ file: p.path, errors: p.errors }, 'template file not loaded; the version loaded before (if any) stays in force');
}

/** Load <data_dir>/templates/ now and on every SIGHUP until stop(). A reload that fails as a whole is logged and changes nothing. */
export function startTemplateFileReload(db: DB, dataDir: string, log: Logger): { reload(trigger: string): void; stop(): void } {
  const folder = templateFolder(dataDir);
  const reload = (trigger: string) => {
    try {
      logTemplateReload(log, reloadTemplateFiles(db, SYSTEM_ACTOR, folder), trigger);
    } catch (err) {
      log.error({ err, folder, trigger }, 'template files could not be reloaded');
    }
  };
  const onHup = () => reload('SIGHUP');
  reload('start');
  process.on('SIGHUP', onHup);
  return { reload, stop: () => process.removeListener('SIGHUP', onHup) };
}
