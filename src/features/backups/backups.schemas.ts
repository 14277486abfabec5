// Schemas of the backup history and content API (spec 2.1, 2.2, 4.3, 4.4; they generate the OpenAPI components) and the DTO mapping.
import { z } from '@hono/zod-openapi';
import { IntIdParam, UuidParam, pagedSchema, paginationQuery } from '../../http/openapi';
import { formatNullable, formatTimestamp } from '../../lib/time';
import type { BackupListRow } from './backups.store';

const TIME_NOTE = '`YYYY-MM-DD HH:MM:SS` in the request time zone (X-Timezone header, else the key owner’s preference, else the appliance’s)';

export const BackupRecordSchema = z
  .object({
    id: z.string().openapi({
      format: 'uuid',
      description: 'Identifier of the backup record; pass it to GET /backups/{backup_id}/content',
      example: '0b5e8a3c-6f1d-4d2e-9a7b-2c4f1e8d9a10',
    }),
    started_at: z.string().openapi({ description: `Start time, ${TIME_NOTE}`, example: '2025-03-01 02:00:04' }),
    finished_at: z
      .string()
      .nullable()
      .openapi({ description: `Completion time, same format; null while the backup is still running`, example: '2025-03-01 02:00:09' }),
    success: z.boolean().openapi({ description: 'Whether the backup succeeded (false while running)', example: true }),
    error_message: z.string().nullable().openapi({ description: 'Failure reason; null when the backup succeeded or is still running', example: null }),
    config_snapshot_hash: z.string().nullable().openapi({
      description: 'SHA-256 (hex) of the stored configuration text; null when there is no snapshot (failed or running). Equal hashes mean identical text.',
      example: '9f2c1a7b3e5d4c6b8a0f1e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6e5f4a3',
    }),
  })
  .openapi('BackupRecord', { description: 'One backup attempt of a device (spec 2.1)' });

export type BackupRecordDto = z.infer<typeof BackupRecordSchema>;

export function toBackupRecordDto(r: BackupListRow, tz: string): BackupRecordDto {
  return {
    id: r.id,
    started_at: formatTimestamp(r.started_at, tz),
    finished_at: formatNullable(r.finished_at, tz),
    success: r.success === 1,
    error_message: r.error_message,
    // A running record already names the snapshot it is writing (docs/snapshot-lifecycle.md): not a stored version yet.
    config_snapshot_hash: r.success === 1 ? r.config_snapshot_hash : null,
  };
}

export const BackupHistoryPageSchema = pagedSchema(BackupRecordSchema, 'BackupHistoryPage');
export type BackupHistoryPage = z.infer<typeof BackupHistoryPageSchema>;

export const BackupHistoryParams = z.object({ device_id: IntIdParam('device_id').openapi({ description: 'Device id' }) });

/** page and limit, with the history's own default (10) and maximum (200) of spec 4.2. */
export const BackupHistoryQuery = z.object(paginationQuery(10, 200));

export const BackupContentParams = z.object({
  backup_id: UuidParam('backup_id').openapi({
    description: 'The `id` of an item of the device backup history',
    example: '0b5e8a3c-6f1d-4d2e-9a7b-2c4f1e8d9a10',
  }),
});

export const BackupContentSchema = z
  .object({
    config_text: z
      .string()
      .nullable()
      .openapi({
        description:
          'The configuration text as stored (redacted only where the device template or the appliance turns redaction on, so treat it as sensitive). null when the record exists but has no usable ' +
          'text: the backup failed or is still running, or its stored snapshot is missing or failed its integrity check.',
        example: 'hostname core-sw-1\ninterface GigabitEthernet0/1\n description uplink\n',
      }),
  })
  .openapi('BackupContent', { description: 'Configuration text of one backup (spec 2.2)' });
