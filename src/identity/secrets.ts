// The master key (a 0600 file in the data dir) and AES-256-GCM encryption of device secrets at rest.
import { createCipheriv, createDecipheriv, createSecretKey, hkdfSync, randomBytes, type KeyObject } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, linkSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

export const MASTER_KEY_FILE = 'master.key';
const VERSION = 1;

/** HKDF label of the key that turns configuration secrets into tokens (src/templates/redact.ts). */
const REDACTION_KEY_LABEL = 'confvault secret redaction v1';

export class SecretBox {
  /**
   * The key of the `<secret:…>` tokens in stored configurations: HKDF-SHA256 of the master key under its own label,
   * never the master key itself. Derived once, here, so whoever holds the box (backups, Try, notification diffs)
   * redacts with the same key: tokens stay equal across restarts and differ between appliances.
   */
  readonly redactionKey: Buffer;

  /**
   * The master key as a KeyObject: a cipher given a Buffer costs about 30 µs more on Node 24 (its key check throws
   * and catches internally), and every backup decrypts its credential (collectors-bench, #27).
   */
  private readonly key: KeyObject;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('master key must be 32 bytes');
    this.key = createSecretKey(key);
    this.redactionKey = Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), REDACTION_KEY_LABEL, 32));
  }

  /** Layout: version(1) | iv(12) | tag(16) | ciphertext. */
  encrypt(plain: string): Buffer {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
  }

  decrypt(blob: Buffer): string {
    if (blob.length < 29 || blob[0] !== VERSION) throw new Error('unknown secret format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, blob.subarray(1, 13));
    decipher.setAuthTag(blob.subarray(13, 29));
    return Buffer.concat([decipher.update(blob.subarray(29)), decipher.final()]).toString('utf8');
  }
}

/** Read the master key, creating it (mode 0600, exclusive create) on first start. */
export function loadOrCreateMasterKey(dataDir: string): Buffer {
  const file = path.join(dataDir, MASTER_KEY_FILE);
  // Written whole under a temporary name, then linked into place: link() fails with EEXIST when another process won,
  // so a concurrent start never reads a key file that exists but is still empty.
  if (!existsSync(file)) {
    const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    const fd = openSync(temp, 'wx', 0o600);
    try {
      writeSync(fd, randomBytes(32).toString('base64') + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(temp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(temp);
    }
  }
  // A key restored with cp or tar may have come back group- or world-readable: tighten it, as the data dir is.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
  if (key.length !== 32) throw new Error(`${file} is not a valid master key (expected 32 bytes, base64)`);
  return key;
}
