// The [[auth.ldap.map]] table: the first entry naming one of the user's groups (by DN, or by CN alone) gives role and scope.
import type { LdapMapping } from '../../config/ldap-config';

/** "CN=NetOps,OU=Groups,DC=x" → "netops": the first RDN's value, for entries that name a group by CN alone. */
function cnOf(dn: string): string {
  const m = /^\s*cn\s*=\s*((?:\\.|[^,])*)/i.exec(dn);
  return (m ? m[1].replace(/\\(.)/g, '$1') : '').trim().toLowerCase();
}

function normaliseDn(dn: string): string {
  return dn
    .split(/(?<!\\),/)
    .map((rdn) => rdn.trim().replace(/\s*=\s*/, '='))
    .join(',')
    .toLowerCase();
}

export interface MappingMatch {
  index: number;
  mapping: LdapMapping;
  group: string;
}

/** The first mapping entry (in file order) one of the groups satisfies, or null. */
export function matchMapping(map: readonly LdapMapping[], groups: readonly string[]): MappingMatch | null {
  const dns = groups.map((g) => ({ dn: g, norm: normaliseDn(g), cn: cnOf(g) }));
  for (const [index, mapping] of map.entries()) {
    const want = mapping.group.includes('=') ? normaliseDn(mapping.group) : mapping.group.trim().toLowerCase();
    const hit = dns.find((g) => (mapping.group.includes('=') ? g.norm === want : g.cn === want));
    if (hit) return { index, mapping, group: hit.dn };
  }
  return null;
}

/** OIDC: the first mapping entry (in file order) naming one of the groups claim's values exactly (case aside), or null. */
export function matchClaimValues(map: readonly LdapMapping[], values: readonly string[]): MappingMatch | null {
  const byKey = new Map(values.map((v) => [v.trim().toLowerCase(), v]));
  for (const [index, mapping] of map.entries()) {
    const hit = byKey.get(mapping.group.trim().toLowerCase());
    if (hit !== undefined) return { index, mapping, group: hit };
  }
  return null;
}
