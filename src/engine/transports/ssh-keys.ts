// SSH keys: host-key fingerprints, and private keys parsed (and decrypted) once per process.
import { createHash } from 'node:crypto';
import ssh2 from 'ssh2';
import type { ParsedKey } from 'ssh2';
import { CollectError } from '../types';

const { utils } = ssh2;
const MAX_CACHED_KEYS = 256;
const parsedKeys = new Map<string, ParsedKey>();

/** OpenSSH-style fingerprint of a host key blob: "SHA256:" + unpadded base64. */
export function hostKeyFingerprint(key: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(key).digest('base64').replace(/=+$/, '');
}

export function parsePrivateKey(o: { private_key?: string | null; passphrase?: string | null; username: string }): ParsedKey | null {
  if (!o.private_key) return null;
  // Decrypting a passphrase-protected OpenSSH key runs bcrypt in JavaScript (0.2 s or more, blocking every
  // other session); parse each key once per process and reuse it.
  const id = createHash('sha256')
    .update(o.private_key)
    .update('\0')
    .update(o.passphrase ?? '')
    .digest('hex');
  const cached = parsedKeys.get(id);
  if (cached) return cached;
  // ssh2 returns an array when the text holds several keys (its typings leave that out).
  const parsed: ParsedKey | ParsedKey[] | Error = utils.parseKey(o.private_key, o.passphrase ?? undefined);
  const key = Array.isArray(parsed) ? (parsed as ParsedKey[])[0] : parsed;
  if (key instanceof Error || !key) {
    const encrypted = /encrypted|passphrase|bad decrypt/i.test(key instanceof Error ? key.message : '');
    throw new CollectError(
      'AUTH_FAILED',
      encrypted
        ? `The private key for user ${o.username} could not be decrypted — check the passphrase.`
        : `The private key for user ${o.username} could not be read (unsupported or damaged key format).`,
      false,
    );
  }
  if (parsedKeys.size >= MAX_CACHED_KEYS) parsedKeys.clear();
  parsedKeys.set(id, key);
  return key;
}
