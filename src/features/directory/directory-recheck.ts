// serve's directory duties: warn of mapping entries naming unknown roles or groups, and re-check every recheck_minutes.
import type { Logger } from 'pino';
import type { DB } from '../../db/open';
import type { LdapConfig } from '../../config/ldap-config';
import { logReferrals, mappingProblems, recheckDirectoryUsers } from './directory.service';

export interface DirectoryRecheck {
  stop(): Promise<void>;
}

export function startDirectoryRecheck(db: DB, cfg: LdapConfig, log: Logger): DirectoryRecheck {
  if (!cfg.url) return { stop: () => Promise.resolve() };
  // Roles and groups live in the database and may be added while serve runs: a warning now, a refused sign-in later.
  for (const problem of mappingProblems(db, cfg)) log.warn({ problem }, 'directory mapping names something that does not exist');
  let running: Promise<void> | null = null;
  const pass = () => {
    // A slow directory must not stack passes: the next tick finds this one still running and skips.
    if (running) return;
    running = recheckDirectoryUsers(db, cfg)
      .then((r) => {
        if (r.unavailable) log.warn({ error: r.unavailable }, 'directory re-check: the directory cannot be reached; nobody changed');
        else if (r.disabled.length || r.updated.length) log.info(r, 'directory re-check');
        logReferrals(log, '(re-check)', r.referrals);
      })
      .catch((err: unknown) => log.error({ err }, 'directory re-check failed'))
      .finally(() => (running = null));
  };
  const timer = setInterval(pass, Math.round(cfg.recheck_minutes * 60_000));
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
