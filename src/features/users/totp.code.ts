// TOTP codes (RFC 6238: HMAC-SHA1, 30-second steps, 6 digits, the parameters every authenticator app assumes) and base32.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const TOTP_STEP_SECONDS = 30;
export const TOTP_DIGITS = 6;
/** Steps accepted either side of now: a phone clock off by up to 30 s still works. */
const DRIFT_STEPS = 1;
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(buf: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

export function base32Decode(text: string): Buffer {
  const clean = text.toUpperCase().replace(/[\s=-]/g, '');
  let bits = 0;
  let value = 0;
  const out: number[] = [];
  for (const ch of clean) {
    const v = BASE32.indexOf(ch);
    if (v < 0) throw new Error('not base32');
    value = ((value << 5) | v) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** A new secret: 160 random bits (RFC 4226's recommended length), base32 as the apps expect it. */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

export function totpStep(now = Date.now()): number {
  return Math.floor(now / 1000 / TOTP_STEP_SECONDS);
}

/** The code of one step (RFC 4226's HOTP with the step as counter). */
export function totpCode(secretBase32: string, step: number): string {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(step));
  const mac = createHmac('sha1', base32Decode(secretBase32)).update(counter).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const bin = mac.readUInt32BE(offset) & 0x7fffffff;
  return String(bin % 10 ** TOTP_DIGITS).padStart(TOTP_DIGITS, '0');
}

/**
 * The step whose code matches, searched within the drift window and only among steps after `lastStep` (a code
 * already used, or an older one, is refused: RFC 6238 section 5.2). null: no match.
 */
export function matchTotp(secretBase32: string, code: string, lastStep: number, now = Date.now()): number | null {
  if (!new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(code)) return null;
  const current = totpStep(now);
  let found: number | null = null;
  // Every candidate is compared (no early exit), each in constant time.
  for (let s = current - DRIFT_STEPS; s <= current + DRIFT_STEPS; s++) {
    if (timingSafeEqual(Buffer.from(totpCode(secretBase32, s)), Buffer.from(code)) && s > lastStep && found === null) found = s;
  }
  return found;
}

/** Whether the code matches a step already used (the refusal is then audited as a replay, not as a wrong code). */
export function isReplayedTotp(secretBase32: string, code: string, lastStep: number, now = Date.now()): boolean {
  if (!new RegExp(`^\\d{${TOTP_DIGITS}}$`).test(code)) return false;
  const current = totpStep(now);
  for (let s = current - DRIFT_STEPS; s <= Math.min(current + DRIFT_STEPS, lastStep); s++) if (totpCode(secretBase32, s) === code) return true;
  return false;
}

/** The otpauth:// URI an authenticator app reads from the QR code (Key Uri Format). */
export function totpUri(secretBase32: string, issuer: string, account: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const q = new URLSearchParams({ secret: secretBase32, issuer, algorithm: 'SHA1', digits: String(TOTP_DIGITS), period: String(TOTP_STEP_SECONDS) });
  return `otpauth://totp/${label}?${q.toString()}`;
}
