// The LDAP conversation of directory sign-in (ldapts): TLS, service bind, user search, user bind, groups (nested walk or AD in-chain).
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { Client, InvalidCredentialsError, type Entry, type SearchOptions } from 'ldapts';
import type { LdapConfig } from '../../config/ldap-config';

/** The directory could not be asked (down, timed out, TLS refused, service account refused): not the user's fault. */
export class DirectoryUnavailableError extends Error {}

export interface DirectoryUser {
  dn: string;
  disabled: boolean;
  /** DNs of every group the user is in, nested ones included (lower-cased as the directory gave them). */
  groups: string[];
  /**
   * Search continuation references the directory returned (Active Directory sends them for the partitions below a
   * domain root): never followed (another server, unknown TLS, the service account's password sent there), reported.
   */
  referrals: string[];
}

/** One lookup's connection, settings, and the referrals its searches met. */
interface Lookup {
  client: Client;
  cfg: LdapConfig;
  referrals: string[];
}

// Bounds of the nested-group walk: a directory with a loop or a huge tree must not hold a sign-in for ever.
const MAX_GROUPS = 500;
const AD_ACCOUNT_DISABLED = 2;
const IN_CHAIN = '1.2.840.113556.1.4.1941';
const MAX_REFERRALS = 20;
/** LDAP result code 10: the whole base lies on another server. */
const REFERRAL = 10;

/** RFC 4515: a value placed inside a filter has its special characters written as \XX. */
export function escapeFilterValue(v: string): string {
  return v.replace(/[\\*()\0]/g, (ch) => `\\${ch.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

/** The user filter with the typed name in place of {username}, escaped. */
export function userFilter(cfg: LdapConfig, username: string): string {
  return cfg.user_filter.split('{username}').join(escapeFilterValue(username));
}

function asList(v: Entry[string] | undefined): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map((x) => (Buffer.isBuffer(x) ? x.toString('utf8') : String(x)));
}

function unavailable(err: unknown): DirectoryUnavailableError {
  const e = err as NodeJS.ErrnoException;
  return new DirectoryUnavailableError(`the directory cannot be reached (${e.code ?? e.name ?? 'error'}: ${(e.message ?? '').split('\n')[0].slice(0, 200)})`);
}

/** One connection: TLS per the settings, bound as the service account. The caller unbinds. */
async function connect(cfg: LdapConfig): Promise<Client> {
  const ms = cfg.timeout_seconds * 1000;
  const host = new URL(cfg.url).hostname.replace(/^\[|\]$/g, '');
  // SNI takes a host name only; the certificate is checked against the url's host (name or address) either way.
  const tlsOptions = () => ({
    ca: cfg.ca_file ? readFileSync(cfg.ca_file) : undefined,
    servername: isIP(host) ? undefined : host,
    minVersion: 'TLSv1.2' as const,
  });
  const ldaps = cfg.url.startsWith('ldaps://');
  // ldapts speaks TLS from the first byte whenever tlsOptions are given: only for ldaps://, StartTLS gets them later.
  const client = new Client({ url: cfg.url, timeout: ms, connectTimeout: ms, tlsOptions: ldaps ? tlsOptions() : undefined, strictDN: false });
  try {
    if (cfg.starttls && !ldaps) await client.startTLS({ ...tlsOptions(), host });
    if (cfg.bind_dn) await client.bind(cfg.bind_dn, readFileSync(cfg.bind_password_file, 'utf8').split(/\r?\n/)[0]);
  } catch (err) {
    await client.unbind().catch(() => undefined);
    if (err instanceof InvalidCredentialsError) throw new DirectoryUnavailableError('the directory refused the service account (bind_dn / bind_password_file)');
    throw unavailable(err);
  }
  return client;
}

/** A search whose continuation references are kept (not followed); a referral for the base itself is a clear error. */
async function search(l: Lookup, base: string, opts: SearchOptions): Promise<Entry[]> {
  try {
    const { searchEntries, searchReferences } = await l.client.search(base, opts);
    for (const uri of searchReferences) if (l.referrals.length < MAX_REFERRALS && !l.referrals.includes(uri)) l.referrals.push(uri);
    return searchEntries;
  } catch (err) {
    if ((err as { code?: unknown }).code !== REFERRAL) throw err;
    throw new DirectoryUnavailableError(
      `the directory sent the search under "${base}" to another server (a referral, not followed): set user_base and group_base to a subtree this server holds, or use a global catalog (port 3269)`,
    );
  }
}

async function findUser(l: Lookup, username: string): Promise<Entry | null> {
  const attributes = ['dn', 'memberOf', 'userAccountControl'];
  const found = await search(l, l.cfg.user_base, { scope: 'sub', filter: userFilter(l.cfg, username), attributes, sizeLimit: 2 });
  // Two entries for one name: refuse rather than guess which person typed it.
  return found.length === 1 ? found[0] : null;
}

/** Active Directory's userAccountControl ACCOUNTDISABLE bit, or the configured disabled_filter. */
async function isDisabled(l: Lookup, entry: Entry): Promise<boolean> {
  const uac = Number(asList(entry.userAccountControl)[0] ?? 0);
  if (uac & AD_ACCOUNT_DISABLED) return true;
  if (!l.cfg.disabled_filter) return false;
  return (await search(l, entry.dn, { scope: 'base', filter: l.cfg.disabled_filter, attributes: ['dn'] })).length > 0;
}

async function groupsOf(l: Lookup, entry: Entry): Promise<string[]> {
  const cfg = l.cfg;
  const base = cfg.group_base || cfg.user_base;
  if (cfg.group_search === 'in_chain') {
    // Active Directory resolves the whole nesting in one query. A directory without the rule (OpenLDAP) matches
    // nothing: then the member walk below answers instead, so the setting never silently empties everyone's groups.
    const filter = `(member:${IN_CHAIN}:=${escapeFilterValue(entry.dn)})`;
    const chained = await search(l, base, { scope: 'sub', filter, attributes: ['dn'], sizeLimit: MAX_GROUPS });
    if (chained.length) return chained.map((e) => e.dn);
  }
  // OpenLDAP and others: the direct groups, then the groups those are in, level by level up to nested_depth.
  const parentsOf = async (dn: string, own: Entry | null): Promise<string[]> => {
    if (cfg.group_search === 'memberof') {
      if (own) return asList(own.memberOf);
      return (await search(l, dn, { scope: 'base', filter: '(objectClass=*)', attributes: ['memberOf'] })).flatMap((e) => asList(e.memberOf));
    }
    const v = escapeFilterValue(dn);
    const found = await search(l, base, { scope: 'sub', filter: `(|(member=${v})(uniqueMember=${v}))`, attributes: ['dn'], sizeLimit: MAX_GROUPS });
    return found.map((e) => e.dn);
  };
  const seen = new Map<string, string>();
  let level = await parentsOf(entry.dn, entry);
  for (let depth = 0; level.length && seen.size < MAX_GROUPS; depth++) {
    const fresh = level.filter((dn) => !seen.has(dn.toLowerCase()));
    for (const dn of fresh) seen.set(dn.toLowerCase(), dn);
    if (depth >= cfg.nested_depth) break;
    level = (await Promise.all(fresh.map((dn) => parentsOf(dn, null)))).flat();
  }
  return [...seen.values()].slice(0, MAX_GROUPS);
}

async function lookup(client: Client, cfg: LdapConfig, username: string): Promise<DirectoryUser | null> {
  const l: Lookup = { client, cfg, referrals: [] };
  const entry = await findUser(l, username);
  if (!entry) return null;
  const disabled = await isDisabled(l, entry);
  const groups = await groupsOf(l, entry);
  return { dn: entry.dn, disabled, groups, referrals: l.referrals };
}

async function withClient<T>(cfg: LdapConfig, fn: (c: Client) => Promise<T>): Promise<T> {
  const client = await connect(cfg);
  try {
    return await fn(client);
  } catch (err) {
    if (err instanceof DirectoryUnavailableError) throw err;
    throw unavailable(err);
  } finally {
    await client.unbind().catch(() => undefined);
  }
}

/** Look a user up with the service account only (re-check, test-ldap without a password): null when not found. */
export function lookupDirectoryUser(cfg: LdapConfig, username: string): Promise<DirectoryUser | null> {
  return withClient(cfg, (c) => lookup(c, cfg, username));
}

/**
 * Sign-in: find the user, bind as them with their password (on a connection of its own, so the search connection
 * keeps the service account's rights), then read their groups. 'bad': not found or wrong password.
 */
export async function authenticateDirectoryUser(cfg: LdapConfig, username: string, password: string): Promise<DirectoryUser | 'bad'> {
  // An empty password is an anonymous bind to most directories: it would "succeed" for anyone.
  if (!password || password.length > 1024 || !username || username.length > 256) return 'bad';
  return withClient(cfg, async (c) => {
    const user = await lookup(c, cfg, username);
    if (!user) return 'bad';
    const own = await connect({ ...cfg, bind_dn: '' });
    try {
      await own.bind(user.dn, password);
    } catch (err) {
      if (err instanceof InvalidCredentialsError) return 'bad';
      throw unavailable(err);
    } finally {
      await own.unbind().catch(() => undefined);
    }
    return user;
  });
}
