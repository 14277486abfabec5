// Versions waiting to be judged, per database handle: small on purpose, so the CLI can wait for them before it closes the database without loading the compliance engine.
import type { DB } from '../../db/open';

export interface Pending {
  ids: Set<string>;
  running: Promise<void> | null;
  lastError: string | null;
}

const pending = new WeakMap<DB, Pending>();

export function pendingFor(db: DB): Pending {
  let p = pending.get(db);
  if (!p) pending.set(db, (p = { ids: new Set(), running: null, lastError: null }));
  return p;
}

/** Resolves once every version handed to judgeStoredVersion is judged (the CLI waits for it before it closes the database). */
export async function complianceIdle(db: DB): Promise<void> {
  for (let p = pending.get(db); p?.running; p = pending.get(db)) await p.running;
}
