// The restore hold: a file in the data dir, written by `db restore`, that keeps every snapshot file until the operator lifts it (`db prune --orphans`).
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';

export const SWEEP_HOLD_FILE = 'orphan-sweep.hold';

/**
 * Put the hold in place: the database just restored does not name the snapshot files of versions recorded after
 * its copy was taken, and the database it replaced (kept aside) still needs them to be restorable.
 */
export function placeSweepHold(dataDir: string, reason: string): void {
  const fd = openSync(path.join(dataDir, SWEEP_HOLD_FILE), 'w', 0o600);
  try {
    writeSync(fd, `${reason}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Why files are held (the hold file's first line), or null when no hold is in place. */
export function readSweepHold(dataDir: string): string | null {
  const file = path.join(dataDir, SWEEP_HOLD_FILE);
  if (!existsSync(file)) return null;
  return readFileSync(file, 'utf8').split('\n')[0] || `a hold is in place (${file})`;
}

export function liftSweepHold(dataDir: string): void {
  rmSync(path.join(dataDir, SWEEP_HOLD_FILE), { force: true });
}
