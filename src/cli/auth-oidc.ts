// `confvault auth test-oidc` and `auth set-oidc-secret`: the provider's discovery, the mapping of given claims, the client secret.
import { readFileSync } from 'node:fs';
import { oidcRedirectUrl, type OidcConfig } from '../config/oidc-config';
import { OidcProvider, ProviderUnavailableError, userFromClaims } from '../features/directory/directory.oidc';
import { hasOidcClientSecret, oidcAccessFor, setOidcClientSecret } from '../features/directory/oidc.service';
import type { ConfigFlags } from '../config/config';
import { printAccess } from './auth-access';
import { UsageError, consoleActor, err, out, readStdinSecret, withAppliance } from './common';

export const OIDC_USAGE = `  confvault auth test-oidc [--claims JSON]
  confvault auth set-oidc-secret [--file PATH]`;

export const OIDC_HELP = `test-oidc reads the [auth.oidc] provider's discovery document and prints its issuer and endpoints, the redirect
URL to register there, and whether a client secret is stored. With --claims '{"preferred_username":"alice",
"groups":["netops"]}' (claims as an ID token would carry them) it prints the username and groups read from them
and the first [[auth.oidc.map]] entry that matches, with the role and scope it gives. Nobody is signed in.
Exit codes: 0 discovery worked (and, with --claims, an entry matched); 1 the provider cannot be reached, or no
entry matched; 2 usage error, or [auth.oidc] is not configured or not valid.

set-oidc-secret stores the client secret, read from standard input (one line) or from --file, encrypted with the
appliance's master key (audited; never printed). Give it before the first sign-in unless client_auth = "none".`;

/** test-oidc: discovery, then the mapping of the given claims. */
export async function testOidc(flags: ConfigFlags, cfg: OidcConfig, claimsJson: string | undefined): Promise<number> {
  let claims: Record<string, unknown> | null = null;
  if (claimsJson !== undefined) {
    try {
      claims = JSON.parse(claimsJson) as Record<string, unknown>;
    } catch (e) {
      throw new UsageError(`auth test-oidc: --claims is not JSON (${(e as Error).message})`);
    }
    if (!claims || typeof claims !== 'object' || Array.isArray(claims)) throw new UsageError('auth test-oidc: --claims must be a JSON object');
  }
  return withAppliance(flags, async (a) => {
    let code = 0;
    const stored = hasOidcClientSecret(a.db);
    // Discovery needs no client secret: a placeholder lets it run before one is stored.
    const provider = new OidcProvider(cfg, () => 'not-used-by-discovery');
    try {
      const m = (await provider.configuration()).serverMetadata();
      out(`issuer: ${m.issuer}`);
      for (const k of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint', 'end_session_endpoint', 'jwks_uri'] as const) {
        out(`${k}: ${m[k] ?? '(none)'}`);
      }
    } catch (e) {
      if (!(e instanceof ProviderUnavailableError)) throw e;
      err(`confvault auth: ${e.message}`);
      code = 1;
    }
    out(`redirect_url: ${oidcRedirectUrl(cfg)}`);
    out(`client_secret: ${cfg.client_auth === 'none' ? 'not needed (client_auth = "none")' : stored ? 'stored' : 'NOT stored (run auth set-oidc-secret)'}`);
    if (!claims) return code;
    const user = userFromClaims(cfg, { sub: 'test-oidc', ...claims });
    out(`username (${cfg.username_claim}): ${user.username ?? '(missing)'}`);
    out(`groups (${cfg.groups_claim}, ${user.groups.length}):`);
    for (const g of user.groups) out(`  ${g}`);
    const access = oidcAccessFor(a.db, cfg, user);
    if (access.match) out(`mapping: map[${access.match.index}] group "${access.match.mapping.group}"`);
    return printAccess(access) || code;
  });
}

/** set-oidc-secret: from --file or standard input into the encrypted store. */
export async function setOidcSecret(flags: ConfigFlags, file: string | undefined): Promise<number> {
  let secret: string;
  if (file) {
    try {
      secret = readFileSync(file, 'utf8').split(/\r?\n/)[0];
    } catch (e) {
      throw new UsageError(`auth set-oidc-secret: cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  } else secret = await readStdinSecret('Client secret');
  if (!secret) throw new UsageError('auth set-oidc-secret: the secret is empty');
  return withAppliance(flags, (a) => {
    setOidcClientSecret(a.db, a.secrets, consoleActor(), secret);
    out('client secret stored (encrypted)');
    return 0;
  });
}
