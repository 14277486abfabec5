// A number that moves whenever the database may have changed, cheap enough to ask on every request.
import type { DB } from './open';

/**
 * The generation of a database handle moves when another connection commits (any process: `PRAGMA data_version`,
 * which needs a read transaction and so is read at most once per event-loop turn) or when this connection changes a
 * row (`total_changes()`, a counter of the connection that costs no transaction). A value read from the database
 * while the generation stood at g is still current while it stands at g, so hot paths can keep such values and skip
 * their query.
 *
 * A commit by another process is seen from the next event-loop turn on: a request is answered from data at most one
 * turn old (microseconds to a few milliseconds under load), as if it had arrived that much earlier, so the CLI's
 * `apikey revoke` still takes effect on the next request a client sends after the command returns. This process's
 * own changes count at once. Inside a transaction there is no generation (null): what it reads may be rolled back.
 */
interface GenerationState {
  generation: number;
  dataVersion: number;
  totalChanges: number;
  /** dataVersion was read in this event-loop turn. */
  fresh: boolean;
  readDataVersion: () => number;
  readTotalChanges: () => number;
  expire: () => void;
}

// A closed handle's entry goes with it.
const states = new WeakMap<DB, GenerationState>();

function stateOf(db: DB): GenerationState {
  let s = states.get(db);
  if (!s) {
    const dataVersion = db.prepare('PRAGMA data_version').pluck();
    const totalChanges = db.prepare('SELECT total_changes()').pluck();
    const state: GenerationState = {
      generation: 0,
      dataVersion: -1,
      totalChanges: -1,
      fresh: false,
      readDataVersion: () => dataVersion.get() as number,
      readTotalChanges: () => totalChanges.get() as number,
      expire: () => {
        state.fresh = false;
      },
    };
    states.set(db, (s = state));
  }
  return s;
}

export function databaseGeneration(db: DB): number | null {
  if (db.inTransaction) return null;
  const s = stateOf(db);
  if (!s.fresh) {
    s.fresh = true;
    setImmediate(s.expire);
    const v = s.readDataVersion();
    if (v !== s.dataVersion) {
      s.dataVersion = v;
      s.generation++;
    }
  }
  const changes = s.readTotalChanges();
  if (changes !== s.totalChanges) {
    s.totalChanges = changes;
    s.generation++;
  }
  return s.generation;
}

/**
 * Values read from a database by key, each kept with the generation it was read at and read again once the
 * generation has moved. `read` must only read, and only what depends on that database and key (a module-level
 * function: no closure is made per call).
 */
export class GenerationMemo<K, V> {
  private readonly byHandle = new WeakMap<DB, Map<K, { generation: number; value: V }>>();

  constructor(private readonly maxEntries: number) {}

  get(db: DB, key: K, read: (db: DB, key: K) => V): V {
    const generation = databaseGeneration(db);
    if (generation === null) return read(db, key);
    let entries = this.byHandle.get(db);
    if (!entries) this.byHandle.set(db, (entries = new Map<K, { generation: number; value: V }>()));
    const hit = entries.get(key);
    if (hit !== undefined && hit.generation === generation) return hit.value;
    const value = read(db, key);
    if (hit === undefined && entries.size >= this.maxEntries) entries.clear();
    entries.set(key, { generation, value });
    return value;
  }
}
