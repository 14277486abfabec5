// Post-processing of one captured configuration, the CPU-heavy part of a backup: strip, redact, fingerprint, hash, compress (run in a capture worker thread).
import { changeFingerprint, lenientFingerprint } from '../../templates/patterns';
import type { TemplateSpec } from '../../templates/types';
import { prepareSnapshot } from '../../store/snapshots';
import type { PreparedCapture } from '../../features/backups/backup-record.service';
import { inflatedText } from '../captured-output';
import { applyTemplate } from '../normalise';
import { CollectError, type FailureType } from '../types';

export interface CaptureTask {
  /** The captured output as deflated UTF-8, in the chunks the session packed it in as it arrived (moved here, not copied). */
  parts: Uint8Array[];
  /** Their size inflated (the parts are deflated: DeflatedOutput). */
  inflated_bytes: number;
  template: Pick<TemplateSpec, 'name' | 'strip_patterns' | 'redact_patterns' | 'ignore_patterns'>;
  /** The redaction key when this backup redacts (collect.ts redaction()), else null. */
  redact_key: Uint8Array | null;
  compress: boolean;
}

export type CaptureAnswer = { ok: true; empty: boolean; prepared: PreparedCapture } | { ok: false; failure: FailureType; message: string };

/**
 * What the store needs from a capture, computed where it runs (a worker thread; in-line in tests): the stored text
 * (applyTemplate: strip, redaction, trimming) is fingerprinted, hashed and compressed, and only the compressed body
 * goes back. A template whose patterns do not compile fails as data, as collectConfig reports it.
 */
export function processCapture(task: CaptureTask): CaptureAnswer {
  const raw = inflatedText({ parts: task.parts, bytes: task.inflated_bytes });
  task.parts.length = 0;
  let text: string;
  try {
    const key = task.redact_key ? Buffer.from(task.redact_key) : null;
    text = applyTemplate(raw, task.template, key ? { redact: true, key } : { redact: false });
  } catch (err) {
    if (err instanceof CollectError) return { ok: false, failure: err.failure, message: err.message };
    throw err;
  }
  const fingerprint = changeFingerprint(text, task.template.ignore_patterns);
  // The lenient print costs a pass over the lines; it is wanted only when the last version was imported, which the
  // worker cannot know, and the text does not leave the worker.
  const lenient = lenientFingerprint(text, task.template.ignore_patterns);
  return { ok: true, empty: text === '', prepared: { fingerprint, lenient, snapshot: prepareSnapshot(text, task.compress) } };
}
