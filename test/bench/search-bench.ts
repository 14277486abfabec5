// Web search over the newest configuration of every device: 10,000 devices, cold (files read and verified) and warm (cached).
import { openDatabase } from '../../src/db/open';
import { SCOPE_ALL } from '../../src/identity/principal';
import { SnapshotStore } from '../../src/store/snapshots';
import type { AppServices } from '../../src/http/context';
import { buildMatcher, searchConfigs } from '../../src/features/configs/search.service';
import { row, type Section } from './common';
import type { SeededDatabase } from './seed';
import path from 'node:path';

const TARGET_MS = 1_000;

/** In-process: the search runs on a pool worker; its wall time is what a user waits. */
export async function runSearchBench(seeded: SeededDatabase, say: (line: string) => void): Promise<Section> {
  say('-- search across the latest configuration of every device');
  const db = openDatabase(path.join(seeded.dataDir, 'confvault.db'), { readonly: true });
  try {
    const app = { db, snapshots: new SnapshotStore(seeded.dataDir), log: null } as unknown as AppServices;
    const queries: [string, 'text' | 'regex'][] = [
      // First: a query no device matches, so the cold run reads every device's newest snapshot.
      ['no-such-line-anywhere', 'text'],
      ['ntp server', 'text'],
      ['^\\s*neighbor \\S+ remote-as 65\\d{3}$', 'regex'],
    ];
    const rows = [];
    let first = true;
    for (const [q, mode] of queries) {
      const matcher = buildMatcher(q, mode, false);
      const runs: number[] = [];
      let last = await searchConfigs(app, SCOPE_ALL, matcher);
      runs.push(last.elapsedMs);
      for (let i = 0; i < 3; i++) {
        last = await searchConfigs(app, SCOPE_ALL, matcher);
        runs.push(last.elapsedMs);
      }
      const warm = Math.min(...runs.slice(1));
      const label = `${mode} "${q}"`;
      if (first)
        rows.push(
          row(
            'first search, cold: every snapshot read, gunzipped, hash-checked',
            `${runs[0]} ms over ${last.devicesSearched.toLocaleString('en-US')} devices`,
            'report only',
            null,
          ),
        );
      first = false;
      rows.push(
        row(`${label}, warm`, `${warm} ms, ${last.hits.length} device(s) hit${last.truncated ? ' (capped)' : ''}`, `< ${TARGET_MS} ms`, warm < TARGET_MS, {
          runs,
        }),
      );
    }
    return {
      title: 'Web search, newest configuration of 10,000 devices (scope all)',
      rows,
      notes: ['searchConfigs from the bench process (the matching on a pool worker) on the seeded database; results capped at 200 devices, 20 matches each.'],
    };
  } finally {
    db.close();
  }
}
