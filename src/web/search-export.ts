// The configuration search's hits as a file: CSV (one row per matching line) or plain text (grep-like), with a note when bounded.
import type { SearchResult } from '../features/configs/search.service';
import { formatTime } from './web-context';

/**
 * A CSV field: quoted when it holds a separator, quote or line break. A field a spreadsheet would take for a
 * formula (= + - @, tab, carriage return first) gets a leading apostrophe, as OWASP advises for CSV exports.
 */
export function csvField(v: string | number): string {
  let s = String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** Why the file may not hold every hit, or null when it does. */
export function exportNote(r: SearchResult): string | null {
  if (r.partial) return 'partial: the time budget ran out before every device was searched';
  if (r.truncated) return 'truncated: the export limit was reached; narrow the search to get everything';
  return null;
}

export function searchCsv(r: SearchResult, tz: string): string {
  const rows = [['device', 'device_id', 'version', 'backup_id', 'line', 'text'].join(',')];
  for (const h of r.hits) {
    const when = formatTime(h.startedAt, tz);
    for (const l of h.lines ?? []) rows.push([h.deviceName, h.deviceId, when, h.backupId, l.n, l.text].map(csvField).join(','));
  }
  return rows.join('\r\n') + '\r\n';
}

export function searchText(r: SearchResult, tz: string): string {
  const out: string[] = [];
  for (const h of r.hits) {
    const more = h.matchCount > (h.lines?.length ?? 0) ? ` (first ${h.lines?.length ?? 0} of ${h.matchCount} matches)` : '';
    out.push(`# ${h.deviceName}: version of ${formatTime(h.startedAt, tz)}${more}`);
    for (const l of h.lines ?? []) out.push(`${h.deviceName}:${l.n}: ${l.text}`);
  }
  const note = exportNote(r);
  if (note) out.push(`# ${note}`);
  return out.join('\n') + '\n';
}
