// Shared by the `confvault compliance` modules: the options, reading an input file, the re-judge a rule change starts.
import { readFileSync } from 'node:fs';
import type { Appliance } from '../app/bootstrap';
import { rejudgeFleet } from '../features/compliance/compliance.service';
import { err, type parse } from './common';
import { ProgressBar } from './progress';

export const OPTIONS = {
  device: { type: 'string' },
  group: { type: 'string' },
  all: { type: 'boolean' },
  json: { type: 'boolean' },
  format: { type: 'string' },
  template: { type: 'string' },
  rule: { type: 'string' },
  reason: { type: 'string' },
  owner: { type: 'string' },
  expires: { type: 'string' },
} as const;

export type ComplianceValues = ReturnType<typeof parse<typeof OPTIONS>>['values'];

/** A rule change re-judges the fleet; the CLI waits for it, with progress on a terminal. */
export async function rejudgeWithProgress(a: Appliance, reason: string): Promise<void> {
  let bar: ProgressBar | null = null;
  const run = rejudgeFleet(a.db, a.snapshots, reason, (done, total) => {
    bar ??= new ProgressBar(total, 're-judging the fleet');
    bar.update(done, 0);
  });
  const end = await run.done;
  (bar as ProgressBar | null)?.finish();
  err(`re-judged ${end.done} of ${end.total} device${end.total === 1 ? '' : 's'} (run ${end.id}, ${end.state})`);
}

export function readInputFile(file: string): string {
  try {
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as Error).message}`);
  }
}
