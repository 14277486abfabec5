// The [auth.oidc] section: OpenID Connect sign-in settings, their defaults, and the start-up checks that need more than one key.
import { z } from 'zod';
import { mappingSchema } from './ldap-config';

export const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;

const claimName = z.string().regex(/^[A-Za-z0-9_:.\-/]{1,128}$/, 'must be a claim name such as "groups"');

export const oidcSchema = z
  .object({
    issuer: z.string().default(''),
    name: z.string().min(1).max(64).default('single sign-on'),
    client_id: z.string().default(''),
    client_auth: z.enum(CLIENT_AUTH_METHODS).default('client_secret_basic'),
    public_url: z.string().default(''),
    scopes: z.array(z.string().regex(/^[\x21-\x7e]+$/, 'a scope has no spaces')).default(['openid', 'profile', 'email']),
    username_claim: claimName.default('preferred_username'),
    name_claim: claimName.default('name'),
    email_claim: claimName.default('email'),
    groups_claim: claimName.default('groups'),
    allow_http: z.boolean().default(false),
    timeout_seconds: z.number().int().min(1).max(120).default(10),
    recheck_minutes: z.number().min(0.01).max(1440).default(15),
    session_max_minutes: z.number().min(1).max(10080).default(480),
    map: z.array(mappingSchema('must name a value of the groups claim')).max(200).default([]),
  })
  .strict();

export type OidcConfig = z.infer<typeof oidcSchema>;

/** The callback the provider sends the browser back to (register it at the provider). */
export function oidcRedirectUrl(o: OidcConfig): string {
  return `${o.public_url.replace(/\/+$/, '')}/login/oidc/callback`;
}

function urlProblem(value: string, allowHttp: boolean): string | null {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && allowHttp) return null;
  return u.protocol === 'http:' ? 'must be https:// (allow_http = true only on test networks)' : 'must be https://';
}

/** Mistakes that no single key shows, one line each (empty: fine). Only checked when an issuer turns OIDC sign-in on. */
export function oidcProblems(o: OidcConfig): string[] {
  if (!o.issuer) return [];
  const p: string[] = [];
  const at = (key: string, msg: string) => p.push(`invalid configuration: auth.oidc.${key}: ${msg}`);
  const issuer = urlProblem(o.issuer, o.allow_http);
  if (issuer) at('issuer', `${issuer}, e.g. "https://id.example.com/realms/corp"`);
  if (!o.client_id) at('client_id', 'must be the client id registered at the provider');
  if (!o.public_url) at('public_url', 'must be the address users reach confvault at, e.g. "https://confvault.example.com"');
  else {
    const pub = urlProblem(o.public_url, o.allow_http);
    if (pub) at('public_url', pub);
    else if (new URL(o.public_url).search || new URL(o.public_url).hash) at('public_url', 'must not carry a query or fragment');
  }
  if (!o.scopes.includes('openid')) at('scopes', 'must include "openid"');
  if (o.map.length === 0) at('map', 'no [[auth.oidc.map]] entry: nobody could sign in through the provider');
  o.map.forEach((m, i) => {
    if (m.scope.includes('all') && m.scope.length > 1) at(`map[${i}].scope`, '"all" stands alone');
  });
  return p;
}
