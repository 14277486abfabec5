// The compliance report: one row per device and rule that applies, as CSV or JSON (the CLI's `compliance report`, later the web's download).
import { stringify } from 'csv-stringify/sync';
import type { DeviceCompliance } from './compliance.service';

export const REPORT_COLUMNS = [
  'device',
  'group',
  'template',
  'backup_id',
  'rule',
  'severity',
  'status',
  'failing_lines',
  'first_failing',
  'waiver_owner',
  'waiver_expires_at',
] as const;

export type ReportRow = Record<(typeof REPORT_COLUMNS)[number], string | number | null>;

export function reportRows(devices: readonly DeviceCompliance[]): ReportRow[] {
  return devices.flatMap((d) =>
    d.results.map((r) => {
      const first = r.failing[0];
      return {
        device: d.device_name,
        group: d.group_path,
        template: d.template,
        backup_id: d.backup_id,
        rule: r.rule_id,
        severity: r.severity,
        status: r.status,
        failing_lines: r.failing.length,
        first_failing: first ? `${first.line ?? '-'}: ${first.text} (${first.message})` : null,
        waiver_owner: r.waiver?.owner ?? null,
        waiver_expires_at: r.waiver ? new Date(r.waiver.expires_at).toISOString() : null,
      };
    }),
  );
}

/** CSV with a header line; a cell starting with =, +, - or @ is prefixed with ' so a spreadsheet never runs it. */
export function reportCsv(rows: readonly ReportRow[]): string {
  const safe = (v: string | number | null) => (typeof v === 'string' && /^[=+\-@\t\r]/.test(v) ? `'${v}` : v);
  return stringify(
    rows.map((r) => REPORT_COLUMNS.map((c) => safe(r[c]))),
    { header: true, columns: [...REPORT_COLUMNS] },
  );
}
