// The [auth.ldap] section: directory sign-in settings, their defaults, and the start-up checks that need more than one key.
import { accessSync, constants } from 'node:fs';
import { z } from 'zod';

export const GROUP_SEARCHES = ['memberof', 'member', 'in_chain'] as const;

/** One entry of an ordered mapping (`[[auth.ldap.map]]`, `[[auth.oidc.map]]`): a group → role and device-group scope. */
export function mappingSchema(groupMessage: string) {
  return z
    .object({
      group: z.string().min(1, groupMessage),
      role: z.string().min(1, 'must name a role'),
      scope: z.array(z.string().min(1)).min(1, 'must list device groups, or ["all"]').default(['all']),
    })
    .strict();
}

export const ldapSchema = z
  .object({
    url: z.union([z.literal(''), z.string().regex(/^ldaps?:\/\/[^\s/]+\/?$/, 'must be ldaps://HOST[:PORT] or ldap://HOST[:PORT]')]).default(''),
    starttls: z.boolean().default(false),
    allow_plain: z.boolean().default(false),
    ca_file: z.string().default(''),
    bind_dn: z.string().default(''),
    bind_password_file: z.string().default(''),
    user_base: z.string().default(''),
    user_filter: z.string().default('(uid={username})'),
    disabled_filter: z.string().default(''),
    group_search: z.enum(GROUP_SEARCHES).default('memberof'),
    group_base: z.string().default(''),
    nested_depth: z.number().int().min(0).max(10).default(5),
    timeout_seconds: z.number().int().min(1).max(120).default(10),
    recheck_minutes: z.number().min(0.01).max(1440).default(15),
    map: z.array(mappingSchema('must name a directory group (its DN or its CN)')).max(200).default([]),
  })
  .strict();

export type LdapConfig = z.infer<typeof ldapSchema>;
export type LdapMapping = LdapConfig['map'][number];

function readable(file: string): boolean {
  try {
    accessSync(file, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** Mistakes that no single key shows, one line each (empty: fine). Only checked when a url turns directory sign-in on. */
export function ldapProblems(l: LdapConfig): string[] {
  if (!l.url) return [];
  const p: string[] = [];
  const at = (key: string, msg: string) => p.push(`invalid configuration: auth.ldap.${key}: ${msg}`);
  const ldaps = l.url.startsWith('ldaps://');
  if (ldaps && l.starttls) at('starttls', 'an ldaps:// url is already TLS: set starttls = false, or use ldap:// with starttls = true');
  if (!ldaps && !l.starttls && !l.allow_plain) {
    at('url', 'ldap:// sends passwords in clear: use ldaps://, or starttls = true, or (test networks only) allow_plain = true');
  }
  if (l.ca_file && !readable(l.ca_file)) at('ca_file', `cannot read ${l.ca_file}`);
  if (l.bind_dn && !l.bind_password_file) at('bind_password_file', 'bind_dn needs the file holding its password');
  if (l.bind_password_file && !readable(l.bind_password_file)) at('bind_password_file', `cannot read ${l.bind_password_file}`);
  if (!l.user_base) at('user_base', 'must name the subtree holding the users, e.g. "ou=people,dc=example,dc=org"');
  if (!l.user_filter.includes('{username}')) at('user_filter', 'must contain {username}, e.g. "(uid={username})"');
  if (!/^\(.*\)$/.test(l.user_filter)) at('user_filter', 'must be an LDAP filter in parentheses');
  if (l.disabled_filter && !/^\(.*\)$/.test(l.disabled_filter)) at('disabled_filter', 'must be an LDAP filter in parentheses');
  if (l.group_search !== 'memberof' && !l.group_base && !l.user_base) at('group_base', 'must name the subtree holding the groups');
  if (l.map.length === 0) at('map', 'no [[auth.ldap.map]] entry: nobody could sign in through the directory');
  l.map.forEach((m, i) => {
    if (m.scope.includes('all') && m.scope.length > 1) at(`map[${i}].scope`, '"all" stands alone');
  });
  return p;
}
