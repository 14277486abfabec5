// Start-up check of the master key against the database: a wrong, replaced or missing master.key stops the appliance.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { DB } from '../../db/open';
import { MASTER_KEY_FILE, SecretBox, loadOrCreateMasterKey } from '../../identity/secrets';
import { anyEncryptedSecret, getKeyCheck, putKeyCheck } from './master-key.store';

/** A master key that does not belong to this database: one line for the operator, no stack. */
export class MasterKeyError extends Error {}

const CHECK_TEXT = 'confvault master key check v1';
const RESTORE = 'restore the master.key that belongs to this database from the backup of the data directory (same file, mode 0600), then start again';

/**
 * Open the secret box of the data directory and prove it opens this database's secrets: against the stored
 * check value, or (a database from before the check existed) against one stored secret, and then store the
 * check. A new key is created only for a database that holds no secret yet.
 */
export function openSecretBox(db: DB, dataDir: string): SecretBox {
  const file = path.join(dataDir, MASTER_KEY_FILE);
  const check = getKeyCheck(db);
  const sample = check ? null : anyEncryptedSecret(db);
  if (!existsSync(file) && (check || sample)) {
    throw new MasterKeyError(`${file} is missing, but the database holds secrets encrypted with it: ${RESTORE}`);
  }
  let box: SecretBox;
  try {
    box = new SecretBox(loadOrCreateMasterKey(dataDir));
  } catch (err) {
    throw new MasterKeyError(`${(err as Error).message}: ${RESTORE}`);
  }
  const read = (blob: Buffer): string | null => {
    try {
      return box.decrypt(blob);
    } catch {
      return null; // wrong key: the GCM tag does not match
    }
  };
  if (check) {
    if (read(check) !== CHECK_TEXT) throw new MasterKeyError(`${file} is not the master key of this database (it was replaced or is damaged): ${RESTORE}`);
    return box;
  }
  if (sample && read(sample) === null) {
    throw new MasterKeyError(`${file} does not decrypt the credentials stored in this database (it was replaced or is damaged): ${RESTORE}`);
  }
  putKeyCheck(db, box.encrypt(CHECK_TEXT));
  return box;
}
