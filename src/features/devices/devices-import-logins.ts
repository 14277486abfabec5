// Logins in an inventory file (CSV login columns, router.db fields) as encrypted credentials: created or reused, one per login and group.
import type { DB } from '../../db/open';
import { ApiError } from '../../errors';
import type { Actor } from '../../identity/actor';
import type { SecretBox } from '../../identity/secrets';
import { nameKey } from '../../lib/names';
import { createCredential, getDecryptedCredential } from '../credentials/credentials.service';
import type { RawLogin, RawRow } from './devices-csv';
import type { InventoryRefs } from './devices-import-refs';

interface Login {
  username: string;
  password: string | null;
  enable_secret: string | null;
}

const same = (a: Login, b: Login) => a.username === b.username && a.password === b.password && a.enable_secret === b.enable_secret;

/**
 * The credential of each row that carries a login. A row naming a credential (its `credential` cell) reuses the
 * credential of that name when it holds the same login, creates it when none has that name, and is refused when
 * it holds another login. A row naming none gets `<username>@<group>` (`@anywhere` when ungrouped; `-2`, `-3` ...
 * when the name holds another login): equal logins in one group share one credential, whose usage scope is that
 * group. Credentials are created through the credentials service (its rules, its audit rows); secrets never leave
 * this module but encrypted.
 */
export interface LoginCredentials {
  /** The row's credential; `created` when this call made it. */
  resolve(raw: RawRow & { login: RawLogin }): { id: number; created: boolean } | { error: string };
  /** A credential made here was rolled back with its row: later rows must not reuse it. */
  forget(id: number): void;
}

export function loginCredentials(db: DB, actor: Actor, secrets: SecretBox, refs: InventoryRefs): LoginCredentials {
  const made = new Map<string, { id: number; login: Login }>();
  const stored = (id: number): Login | undefined => {
    const c = getDecryptedCredential(db, secrets, id);
    return c && { username: c.username, password: c.password, enable_secret: c.enable_secret };
  };
  /** The credential named `name` if it holds `login`; null when no credential has the name; 'other' when it holds another. */
  const holding = (name: string, login: Login): number | null | 'other' => {
    const mine = made.get(nameKey(name));
    if (mine) return same(mine.login, login) ? mine.id : 'other';
    const found = refs.credential(name);
    if ('error' in found) return null;
    const existing = stored(found.id);
    return existing && same(existing, login) ? found.id : 'other';
  };
  const create = (name: string, login: Login, groupId: number | null): number => {
    const c = createCredential(db, actor, secrets, {
      name,
      ...login,
      description: 'imported with the device inventory',
      group_ids: groupId === null ? null : [groupId],
    });
    made.set(nameKey(name), { id: c.id, login });
    return c.id;
  };
  const resolve = (raw: RawRow & { login: RawLogin }): { id: number; created: boolean } | { error: string } => {
    const login: Login = { username: raw.login.username ?? '', password: raw.login.password ?? null, enable_secret: raw.login.enable_secret ?? null };
    if (login.password === null) return { error: 'a login needs a password (the password column or field is empty)' };
    const group = raw.fields.group === undefined ? null : refs.group(raw.fields.group);
    if (group && 'error' in group) return group;
    const groupId = group ? group.id : null;
    try {
      const named = raw.fields.credential;
      if (named !== undefined) {
        const id = holding(named, login);
        if (id === 'other')
          return { error: `credential "${named}" exists with another login: leave the login cells empty to use it, or name another credential` };
        return id === null ? { id: create(named, login, groupId), created: true } : { id, created: false };
      }
      const base = `${login.username || 'login'}@${groupId === null ? 'anywhere' : refs.groupLabel(groupId)}`.slice(0, 120);
      for (let n = 1; n <= 50; n++) {
        const name = n === 1 ? base : `${base}-${n}`;
        const id = holding(name, login);
        if (id !== 'other') return id === null ? { id: create(name, login, groupId), created: true } : { id, created: false };
      }
      return { error: `50 credentials named ${base}-N hold other logins; name the credential in the credential column` };
    } catch (err) {
      if (err instanceof ApiError && err.status < 500) return { error: err.message };
      throw err;
    }
  };
  const forget = (id: number) => {
    for (const [key, v] of made) if (v.id === id) made.delete(key);
  };
  return { resolve, forget };
}
