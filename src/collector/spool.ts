// Results the central could not take yet: one 0600 file each under <data_dir>/spool, delivered oldest first, bounded in size.
import { mkdirSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** A spooled result holds the redacted configuration text and the lease id: never a credential (they are never written). */
export class Spool {
  private readonly dir: string;
  private seq = 0;
  /** Files in the spool: only this process writes it, and the work loop asks on every turn (no directory read each time). */
  private n: number;

  constructor(
    dataDir: string,
    private readonly maxBytes: number,
  ) {
    this.dir = path.join(dataDir, 'spool');
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const files = this.files();
    for (const f of files) this.seq = Math.max(this.seq, Number(f.split('-')[0]));
    this.n = files.length;
  }

  /** File names in delivery order (the sequence number is zero-padded). */
  private files(): string[] {
    return readdirSync(this.dir)
      .filter((f) => f.endsWith('.json'))
      .sort();
  }

  size(): number {
    return this.files().reduce((n, f) => n + statSync(path.join(this.dir, f)).size, 0);
  }

  count(): number {
    return this.n;
  }

  /** Adds a result; false when it would pass the bound (the lease then expires and the central queues the backup again). */
  add(result: { lease_id: string }): boolean {
    const text = JSON.stringify(result);
    if (this.size() + Buffer.byteLength(text) > this.maxBytes) return false;
    const name = `${String(++this.seq).padStart(12, '0')}-${result.lease_id}.json`;
    const temp = path.join(this.dir, `.${name}.tmp`);
    writeFileSync(temp, text, { mode: 0o600 });
    renameSync(temp, path.join(this.dir, name));
    this.n++;
    return true;
  }

  /** The oldest result and a function that removes it once delivered. */
  *pending(): Generator<{ result: unknown; done: () => void }> {
    for (const f of this.files()) {
      const file = path.join(this.dir, f);
      yield {
        result: JSON.parse(readFileSync(file, 'utf8')) as unknown,
        done: () => {
          unlinkSync(file);
          this.n--;
        },
      };
    }
  }
}
