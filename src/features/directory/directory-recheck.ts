// serve's directory duties: warn of mapping entries naming unknown roles or groups, and re-check LDAP and OIDC users at their intervals.
import type { Logger } from 'pino';
import type { DB } from '../../db/open';
import type { LdapConfig } from '../../config/ldap-config';
import type { OidcConfig } from '../../config/oidc-config';
import type { SecretBox } from '../../identity/secrets';
import { logReferrals, mappingProblems, recheckDirectoryUsers, type RecheckResult } from './directory.service';
import { hasOidcClientSecret, oidcProviderFor, recheckOidcUsers } from './oidc.service';

export interface DirectoryRecheck {
  stop(): Promise<void>;
}

const OFF: DirectoryRecheck = { stop: () => Promise.resolve() };

function every(minutes: number, what: string, log: Logger, run: () => Promise<RecheckResult>): DirectoryRecheck {
  let running: Promise<void> | null = null;
  const pass = () => {
    // A slow directory must not stack passes: the next tick finds this one still running and skips.
    if (running) return;
    running = run()
      .then((r) => {
        if (r.unavailable) log.warn({ error: r.unavailable }, `${what} re-check: it cannot be reached; nobody changed`);
        else if (r.disabled.length || r.updated.length) log.info(r, `${what} re-check`);
        logReferrals(log, '(re-check)', r.referrals);
      })
      .catch((err: unknown) => log.error({ err }, `${what} re-check failed`))
      .finally(() => (running = null));
  };
  const timer = setInterval(pass, Math.round(minutes * 60_000));
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

export function startDirectoryRecheck(db: DB, cfg: LdapConfig, log: Logger): DirectoryRecheck {
  if (!cfg.url) return OFF;
  // Roles and groups live in the database and may be added while serve runs: a warning now, a refused sign-in later.
  for (const problem of mappingProblems(db, cfg.map, 'ldap')) log.warn({ problem }, 'directory mapping names something that does not exist');
  return every(cfg.recheck_minutes, 'directory', log, () => recheckDirectoryUsers(db, cfg));
}

/** OIDC users: refresh tokens redeemed (or unconfirmed users ended) every recheck_minutes; see recheckOidcUsers. */
export function startOidcRecheck(db: DB, secrets: SecretBox, cfg: OidcConfig, log: Logger): DirectoryRecheck {
  if (!cfg.issuer) return OFF;
  for (const problem of mappingProblems(db, cfg.map, 'oidc')) log.warn({ problem }, 'OIDC mapping names something that does not exist');
  if (cfg.client_auth !== 'none' && !hasOidcClientSecret(db)) log.warn('OIDC sign-in: no client secret stored; run `confvault auth set-oidc-secret`');
  const provider = oidcProviderFor(db, secrets, cfg);
  return every(cfg.recheck_minutes, 'identity provider', log, () => recheckOidcUsers(db, secrets, cfg, provider));
}
