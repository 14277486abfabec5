// Queries for OIDC sign-in (schema 0022): each user's provider tokens and the door's secrets, stored encrypted by the caller.
import type { DB } from '../../db/open';

export interface OidcTokenRow {
  user_id: number;
  refresh_token: Buffer | null;
  id_token: Buffer | null;
  updated_at: number;
}

export function getOidcTokens(db: DB, userId: number): OidcTokenRow | undefined {
  return db.prepare('SELECT user_id, refresh_token, id_token, updated_at FROM oidc_tokens WHERE user_id = ?').get(userId) as OidcTokenRow | undefined;
}

export function putOidcTokens(db: DB, userId: number, t: { refresh_token: Buffer | null; id_token: Buffer | null }, now = Date.now()): void {
  db.prepare(
    `INSERT INTO oidc_tokens (user_id, refresh_token, id_token, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (user_id) DO UPDATE SET refresh_token = excluded.refresh_token, id_token = excluded.id_token, updated_at = excluded.updated_at`,
  ).run(userId, t.refresh_token, t.id_token, now);
}

export function deleteOidcTokens(db: DB, userId: number): void {
  db.prepare('DELETE FROM oidc_tokens WHERE user_id = ?').run(userId);
}

export function getAuthSecret(db: DB, name: string): Buffer | undefined {
  return db.prepare('SELECT value FROM auth_secrets WHERE name = ?').pluck().get(name) as Buffer | undefined;
}

export function putAuthSecret(db: DB, name: string, value: Buffer, now = Date.now()): void {
  db.prepare(
    `INSERT INTO auth_secrets (name, value, updated_at) VALUES (?, ?, ?)
     ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
  ).run(name, value, now);
}
