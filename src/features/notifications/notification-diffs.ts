// The redacted diffs of one notification message, computed off the event loop (a pool worker) under one deadline per message.
import { createTwoFilesPatch } from 'diff';
import { redactLines } from '../../templates/redact';
import type { RedactRule } from '../../templates/types';

/** Largest diff carried by one event, in characters; the rest is cut and marked. */
export const MAX_DIFF_CHARS = 64 * 1024;
/** Largest text compared for a diff: bigger configurations get a note instead. */
const MAX_DIFF_INPUT = 1024 * 1024;
/** How long the diffs of one message (alone or a digest of up to 500 events) may take together. */
export const DIGEST_DIFF_DEADLINE_MS = 5_000;
/** What an event carries when its diff did not fit in the message's deadline. */
export const DIFF_DID_NOT_FIT = '(diff not included: the diffs of this message did not fit in their time limit)';

export interface DiffRequest {
  device_name: string;
  snapshot: string;
  previous_snapshot: string | null;
  redact_patterns: RedactRule[];
}

/** The work of one message: its events' diffs, the redaction key (hex) and the point in time they must be done by. */
export interface NotificationDiffsTask {
  diffs: DiffRequest[];
  redaction_key: string;
  deadline_at: number;
  snapshotsRoot: string;
}

export interface DiffOutcome {
  diff: string;
  truncated: boolean;
}

/** Runs a task on the pool within `hardMs` (injected: the pool lives with the web layer). */
export type NotificationDiffRunner = (task: NotificationDiffsTask, hardMs: number) => Promise<DiffOutcome[]>;

/**
 * The diffs, in order. A diff leaves the appliance, so it is redacted even when the stored versions are not; secrets
 * already stored as tokens stay as they are. Once the deadline has passed, the remaining events say so instead.
 */
export function computeNotificationDiffs(task: NotificationDiffsTask, read: (hash: string) => string | null): DiffOutcome[] {
  const key = Buffer.from(task.redaction_key, 'hex');
  return task.diffs.map((d) => {
    const left = task.deadline_at - Date.now();
    if (left <= 0) return { diff: DIFF_DID_NOT_FIT, truncated: true };
    const text = (hash: string | null) => {
      if (!hash) return '';
      try {
        return read(hash) ?? '';
      } catch {
        return '';
      }
    };
    const after = text(d.snapshot);
    const before = text(d.previous_snapshot);
    if (after.length + before.length > MAX_DIFF_INPUT) return { diff: '(configuration too large for an inline diff)', truncated: true };
    const redact = (t: string) => redactLines(t.split('\n'), d.redact_patterns, key).join('\n');
    const patch = createTwoFilesPatch(`${d.device_name} (before)`, `${d.device_name} (after)`, redact(before), redact(after), undefined, undefined, {
      context: 3,
      maxEditLength: 4_000,
      timeout: Math.min(500, left),
    });
    if (patch === undefined) return { diff: Date.now() >= task.deadline_at ? DIFF_DID_NOT_FIT : '(change too large for an inline diff)', truncated: true };
    // A unified diff from its `---` line: the library's first line is a separator of its own, not part of the format.
    const body = patch.slice(patch.indexOf('\n--- ') + 1);
    return body.length > MAX_DIFF_CHARS ? { diff: body.slice(0, MAX_DIFF_CHARS), truncated: true } : { diff: body, truncated: false };
  });
}
