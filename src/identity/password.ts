// Password hashing with argon2id (loaded lazily so the executable can point it at its extracted addon first).
import { randomBytes } from 'node:crypto';

type Argon2 = typeof import('@node-rs/argon2');
let lib: Promise<Argon2> | undefined;
const argon2 = (): Promise<Argon2> => (lib ??= import('@node-rs/argon2'));

// Algorithm.Argon2id = 2; OWASP's baseline of 19 MiB, 2 passes.
const OPTIONS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export async function hashPassword(password: string): Promise<string> {
  return (await argon2()).hash(password, OPTIONS);
}

export async function verifyPassword(hash: string, password: string): Promise<boolean> {
  try {
    return await (await argon2()).verify(hash, password);
  } catch {
    return false;
  }
}

/** A random password a person can type: 20 characters from an unambiguous alphabet. */
export function generatePassword(length = 20): string {
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
  const bytes = randomBytes(length * 2);
  let out = '';
  for (let i = 0; out.length < length && i < bytes.length; i++) {
    if (bytes[i] < 256 - (256 % alphabet.length)) out += alphabet[bytes[i] % alphabet.length];
  }
  return out;
}

export const MIN_PASSWORD_LENGTH = 10;
