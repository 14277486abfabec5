// Content-addressed snapshot files: <data_dir>/snapshots/ab/<sha256>[.gz], written atomically, verified on read.
import { createHash, webcrypto } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  promises as fsp,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync, gzip, gzipSync, constants as zlib } from 'node:zlib';

const gzipAsync = promisify(gzip);
/** putAsync hashes and compresses a text up to this size on the event loop (about 1 ms at most), a larger one on the thread pool. */
const INLINE_PUT_MAX = 128 * 1024;

export interface SnapshotInfo {
  hash: string;
  size: number;
  stored_size: number;
  compressed: boolean;
}

export class SnapshotIntegrityError extends Error {}

/** A snapshot ready to be written: its text's SHA-256 and size, and the body as it goes to disk (gzipped or not). */
export interface PreparedSnapshot {
  hash: string;
  size: number;
  body: Uint8Array;
  compressed: boolean;
}

/** Hash and (optionally) compress a text for SnapshotStore.putPrepared: the CPU part of a put, for a worker thread. */
export function prepareSnapshot(text: string, compress: boolean): PreparedSnapshot {
  const buf = Buffer.from(text, 'utf8');
  return { hash: sha256Hex(buf), size: buf.length, body: compress ? gzipSync(buf, { level: zlib.Z_BEST_SPEED }) : buf, compressed: compress };
}

/** The snapshot could not be written (disk full, quota, read-only or failing disk); nothing was left behind. */
export class SnapshotStorageError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SnapshotStorageError';
  }
}

const STORAGE_PROBLEMS: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is exhausted',
  EROFS: 'the file system is read-only',
  EIO: 'the disk reported an input/output error',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
};

export function sha256Hex(text: string | Buffer): string {
  return createHash('sha256').update(text).digest('hex');
}

const HASH_RE = /^[0-9a-f]{64}$/;

let tempSeq = 0;
/** Opens a new file for writing, making its folder only when it is missing (most writes land in an existing one). */
async function openCreatingDir(dir: string, file: string): Promise<fsp.FileHandle> {
  try {
    return await fsp.open(file, 'w', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
    return fsp.open(file, 'w', 0o600);
  }
}

/** A temporary file name of its own: two putAsync() of the same text can be in flight at once (same hash, same millisecond). */
function tempName(dir: string, hash: string): string {
  return path.join(dir, `.${hash}.${process.pid}.${Date.now()}.${++tempSeq}.tmp`);
}

/** write(2) may write less than asked (a nearly full disk does): keep writing until all of it is on disk or it fails. */
function writeAll(fd: number, body: Buffer): void {
  let off = 0;
  while (off < body.length) {
    const n = writeSync(fd, body, off, body.length - off);
    if (n <= 0) throw Object.assign(new Error('short write'), { code: 'ENOSPC' });
    off += n;
  }
}

/**
 * Called with the hash before a put() looks for or writes the file: the caller names the hash in its record there
 * (docs/snapshot-lifecycle.md), so that an orphan sweep in any process sees the file as referenced from then on.
 */
export type ReserveSnapshot = (hash: string) => void;

/** A file put() found already stored is about to be referenced again: its mtime restarts the orphan grace period. */
function touch(file: string): void {
  try {
    const now = new Date();
    utimesSync(file, now, now);
  } catch {
    /* the reservation protects it; the grace period is the second line */
  }
}

export class SnapshotStore {
  readonly root: string;
  constructor(
    dataDir: string,
    private readonly compress = true,
  ) {
    this.root = path.join(dataDir, 'snapshots');
  }

  private dirFor(hash: string): string {
    return path.join(this.root, hash.slice(0, 2));
  }

  /** Path of the stored file for a hash, whichever form it was stored in, or null. */
  locate(hash: string): string | null {
    if (!HASH_RE.test(hash)) return null;
    const base = path.join(this.dirFor(hash), hash);
    if (existsSync(base + '.gz')) return base + '.gz';
    if (existsSync(base)) return base;
    return null;
  }

  /**
   * Store text under its SHA-256. Identical text is stored once. The file is complete on disk
   * (temporary file, fsync, rename, fsync of the folder) before this returns, so a record that
   * points at it can be committed safely afterwards.
   */
  put(text: string, reserve?: ReserveSnapshot): SnapshotInfo {
    const buf = Buffer.from(text, 'utf8');
    const hash = sha256Hex(buf);
    reserve?.(hash);
    const existing = this.locate(hash);
    if (existing) {
      touch(existing);
      return { hash, size: buf.length, stored_size: statSync(existing).size, compressed: existing.endsWith('.gz') };
    }
    const body = this.compress ? gzipSync(buf, { level: zlib.Z_BEST_SPEED }) : buf;
    const dir = this.dirFor(hash);
    const final = path.join(dir, hash + (this.compress ? '.gz' : ''));
    const tmp = tempName(dir, hash);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      const fd = openSync(tmp, 'w', 0o600);
      try {
        writeAll(fd, body);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(tmp, final);
      const dfd = openSync(dir, 'r');
      try {
        fsyncSync(dfd);
      } finally {
        closeSync(dfd);
      }
    } catch (err) {
      // Nothing half-written stays behind: the record pointing at this file is never committed either.
      rmSync(tmp, { force: true });
      throw this.storageError(err, body.length);
    }
    return { hash, size: buf.length, stored_size: body.length, compressed: this.compress };
  }

  /**
   * put() without holding the event loop: SHA-256 and gzip of a text over INLINE_PUT_MAX run on libuv's thread pool,
   * and the file operations are asynchronous (measured on a 2-vCPU machine: put() of 10 MB blocks 100-250 ms, of 32 MB over a second).
   * Same file, same guarantees, same errors.
   */
  async putAsync(text: string, reserve?: ReserveSnapshot): Promise<SnapshotInfo> {
    const buf = Buffer.from(text, 'utf8');
    // collectors-bench (#27): a text of common size is hashed and compressed right here. On the thread pool a 20-50 KB
    // text cost about twice the CPU (SubtleCrypto's digest 213 us against 23 us; gzip 445 us against 210 us) to spare
    // the event loop well under a millisecond; every result a collector uploads comes this way.
    const inline = buf.length <= INLINE_PUT_MAX;
    const hash = inline ? sha256Hex(buf) : Buffer.from(await webcrypto.subtle.digest('SHA-256', buf)).toString('hex');
    if (this.locate(hash)) return this.putPrepared({ hash, size: buf.length, body: buf, compressed: false }, reserve);
    const gzipOptions = { level: zlib.Z_BEST_SPEED };
    const body = !this.compress ? buf : inline ? gzipSync(buf, gzipOptions) : await gzipAsync(buf, gzipOptions);
    return this.putPrepared({ hash, size: buf.length, body, compressed: this.compress }, reserve);
  }

  /** Whether new snapshots are written gzipped ([storage] compress_snapshots): what prepareSnapshot needs to know. */
  get compresses(): boolean {
    return this.compress;
  }

  /**
   * Writes a snapshot whose hash and stored body were computed elsewhere (prepareSnapshot, in a capture worker thread:
   * src/engine/capture), with putAsync's guarantees: nothing but asynchronous file operations on the event loop.
   * Identical text already stored is kept as it is.
   */
  async putPrepared(p: PreparedSnapshot, reserve?: ReserveSnapshot): Promise<SnapshotInfo> {
    const { hash, body } = p;
    reserve?.(hash);
    const existing = this.locate(hash);
    if (existing) {
      touch(existing);
      return { hash, size: p.size, stored_size: (await fsp.stat(existing)).size, compressed: existing.endsWith('.gz') };
    }
    const dir = this.dirFor(hash);
    const final = path.join(dir, hash + (p.compressed ? '.gz' : ''));
    const tmp = tempName(dir, hash);
    try {
      const fh = await openCreatingDir(dir, tmp);
      try {
        for (let off = 0; off < body.length;) {
          const { bytesWritten } = await fh.write(body, off, body.length - off);
          if (bytesWritten <= 0) throw Object.assign(new Error('short write'), { code: 'ENOSPC' });
          off += bytesWritten;
        }
        await fh.sync();
      } finally {
        await fh.close();
      }
      await fsp.rename(tmp, final);
      const dh = await fsp.open(dir, 'r');
      try {
        await dh.sync();
      } finally {
        await dh.close();
      }
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw this.storageError(err, body.length);
    }
    return { hash, size: p.size, stored_size: body.length, compressed: p.compressed };
  }

  /** A failed write as SnapshotStorageError when it is the storage's fault (full, read-only ...); anything else unchanged. */
  private storageError(err: unknown, bytes: number): unknown {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    const why = STORAGE_PROBLEMS[code];
    if (!why) return err;
    return new SnapshotStorageError(code, `Could not store the configuration snapshot (${bytes} bytes): ${why} (${code}) under ${this.root}.`);
  }

  /** Read and verify. Null when missing; SnapshotIntegrityError when the content does not match its name. */
  read(hash: string): string | null {
    const file = this.locate(hash);
    if (!file) return null;
    let buf = readFileSync(file);
    if (file.endsWith('.gz')) {
      try {
        buf = gunzipSync(buf);
      } catch {
        throw new SnapshotIntegrityError(`snapshot ${hash} is not valid gzip`);
      }
    }
    if (sha256Hex(buf) !== hash) throw new SnapshotIntegrityError(`snapshot ${hash} does not match its hash`);
    return buf.toString('utf8');
  }

  remove(hash: string): void {
    const file = this.locate(hash);
    if (file) rmSync(file, { force: true });
  }

  /**
   * Remove the stored file of a hash when it was last written or reused before `before` (epoch ms); true when it
   * went. The caller holds the database's write lock and has seen that no record names the hash.
   */
  removeIfUntouchedSince(hash: string, before: number): boolean {
    const file = this.locate(hash);
    if (!file || statSync(file).mtimeMs >= before) return false;
    rmSync(file, { force: true });
    return true;
  }

  /** Remove a leftover temporary file older than `before`; true when it went (a live write's file is younger). */
  removeTemporaryOlderThan(file: string, before: number): boolean {
    try {
      if (statSync(file).mtimeMs >= before) return false;
      rmSync(file, { force: true });
      return true;
    } catch {
      return false;
    }
  }

  /** Every stored hash, and leftover temporary files from an interrupted write. */
  scan(): { hashes: string[]; temporary: string[] } {
    const hashes: string[] = [];
    const temporary: string[] = [];
    if (!existsSync(this.root)) return { hashes, temporary };
    for (const sub of readdirSync(this.root)) {
      const dir = path.join(this.root, sub);
      for (const f of readdirSync(dir)) {
        if (f.endsWith('.tmp')) temporary.push(path.join(dir, f));
        else {
          const h = f.replace(/\.gz$/, '');
          if (HASH_RE.test(h)) hashes.push(h);
        }
      }
    }
    return { hashes, temporary };
  }
}
