// Queries for directory users: their rows, creation at first sign-in, and those the re-check must look at.
import type { DB } from '../../db/open';

export interface DirectoryUserRow {
  id: number;
  username: string;
  role_id: number;
  scope_all: number;
  disabled: number;
  directory_disabled: number;
  source: 'local' | 'ldap' | 'oidc';
  directory_dn: string | null;
  directory_checked_at: number | null;
}

const COLUMNS = 'id, username, role_id, scope_all, disabled, directory_disabled, source, directory_dn, directory_checked_at';

export function getUserSourceRow(db: DB, username: string): DirectoryUserRow | undefined {
  return db.prepare(`SELECT ${COLUMNS} FROM users WHERE username = ?`).get(username) as DirectoryUserRow | undefined;
}

/** A directory user has no password: '!' is no argon2 hash, so a local check of it always fails. */
export function insertDirectoryUser(
  db: DB,
  u: { username: string; dn: string; role_id: number; scope_all: boolean; source?: 'ldap' | 'oidc' },
  now = Date.now(),
): number {
  const info = db
    .prepare(
      `INSERT INTO users (username, password_hash, role_id, scope_all, disabled, must_change_password, created_at, updated_at,
                          source, directory_dn, directory_checked_at)
       VALUES (?, '!', ?, ?, 0, 0, ?, ?, ?, ?, ?)`,
    )
    .run(u.username, u.role_id, u.scope_all ? 1 : 0, now, now, u.source ?? 'ldap', u.dn, now);
  return Number(info.lastInsertRowid);
}

export function updateDirectoryUser(
  db: DB,
  id: number,
  f: { dn?: string; role_id?: number; scope_all?: boolean; disabled?: boolean; directory_disabled?: boolean },
  now = Date.now(),
): void {
  db.prepare(
    `UPDATE users SET directory_dn = coalesce(@dn, directory_dn), role_id = coalesce(@role_id, role_id),
            scope_all = coalesce(@scope_all, scope_all), disabled = coalesce(@disabled, disabled),
            directory_disabled = coalesce(@directory_disabled, directory_disabled), directory_checked_at = @now, updated_at = @now
      WHERE id = @id AND source != 'local'`,
  ).run({
    id,
    now,
    dn: f.dn ?? null,
    role_id: f.role_id ?? null,
    scope_all: f.scope_all === undefined ? null : Number(f.scope_all),
    disabled: f.disabled === undefined ? null : Number(f.disabled),
    directory_disabled: f.directory_disabled === undefined ? null : Number(f.directory_disabled),
  });
}

/** Enabled directory users holding a live web session or a usable API key: those a re-check must confirm. */
export function listDirectoryUsersInUse(db: DB, now = Date.now(), source: 'ldap' | 'oidc' = 'ldap'): DirectoryUserRow[] {
  return db
    .prepare(
      `SELECT ${COLUMNS} FROM users u
        WHERE u.source = @source AND u.disabled = 0
          AND (EXISTS (SELECT 1 FROM web_sessions s WHERE s.user_id = u.id AND s.expires_at > @now)
               OR EXISTS (SELECT 1 FROM api_keys k WHERE k.user_id = u.id AND k.revoked_at IS NULL
                                                    AND (k.expires_at IS NULL OR k.expires_at > @now)))
        ORDER BY u.id`,
    )
    .all({ now, source }) as DirectoryUserRow[];
}

/** Device groups by name, case-insensitively: a mapping's scope names groups. */
export function groupIdsNamed(db: DB, name: string): number[] {
  return db.prepare('SELECT id FROM device_groups WHERE name = ? COLLATE NOCASE ORDER BY id').pluck().all(name) as number[];
}
