// Queries for the master key's check value (in settings) and a sample of stored secrets to test a key against.
import type { DB } from '../../db/open';
import { prepareCached } from '../../db/statements';

const KEY_CHECK = 'master_key_check';

export function getKeyCheck(db: DB): Buffer | null {
  const row = prepareCached(db, 'SELECT value FROM settings WHERE key = ?').get(KEY_CHECK) as { value: string } | undefined;
  return row === undefined ? null : Buffer.from(row.value, 'base64');
}

export function putKeyCheck(db: DB, blob: Buffer): void {
  prepareCached(db, 'INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(
    KEY_CHECK,
    blob.toString('base64'),
  );
}

/** One stored encrypted secret (any credential, any field), to test a master key against; null when none exists. */
export function anyEncryptedSecret(db: DB): Buffer | null {
  const row = prepareCached(
    db,
    `SELECT coalesce(password_enc, private_key_enc, passphrase_enc, enable_secret_enc) AS blob FROM credentials
      WHERE coalesce(password_enc, private_key_enc, passphrase_enc, enable_secret_enc) IS NOT NULL LIMIT 1`,
  ).get() as { blob: Buffer } | undefined;
  return row?.blob ?? null;
}
