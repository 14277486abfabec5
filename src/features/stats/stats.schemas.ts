// Response schema of the statistics endpoint (it generates the OpenAPI component) and the DTO mapping.
import { z } from '@hono/zod-openapi';
import type { Statistics } from './stats.service';

const count = (description: string, example: number) => z.number().int().min(0).openapi({ description, example });

export const StatisticsSchema = z
  .object({
    devices: z
      .object({
        total: count('All devices', 240),
        enabled: count('Devices included in scheduled backups', 236),
        unreachable: count('Devices whose last connection attempt failed', 3),
      })
      .openapi('DeviceStatistics'),
    groups: count('Device groups', 12),
    credentials: count('Stored credentials', 4),
    templates: count('Backup templates, built-in and custom', 18),
    backups: z
      .object({
        total: count('Backup records kept (all devices, all outcomes)', 86400),
        last_24h: z
          .object({
            succeeded: count('Successful backups that started in the last 24 hours', 238),
            failed: count('Failed backups that started in the last 24 hours', 2),
          })
          .openapi({ description: 'Finished backups that started in the 24 hours before the request; running ones are not counted' }),
        running: count('Backups in progress now', 0),
      })
      .openapi('BackupStatistics'),
    storage: z
      .object({
        snapshot_files: count('Distinct configuration texts stored (identical texts are stored once)', 5120),
        bytes_stored: count('Bytes the snapshot files take on disk (compressed)', 41943040),
        bytes_before_dedup: count('Bytes of the configuration texts of all successful backup records, uncompressed', 2147483648),
        dedup_ratio: z.number().min(0).openapi({
          description: '`bytes_before_dedup / bytes_stored`, two decimals: the saving of deduplication and compression together; 1 when nothing is stored',
          example: 51.2,
        }),
      })
      .openapi('StorageStatistics'),
    total_devices: count('Same as `devices.total` (kept for integrations that read the flat field)', 240),
    unreachable_devices: count('Same as `devices.unreachable` (flat field)', 3),
    failed_backups_24h: count('Same as `backups.last_24h.failed` (flat field)', 2),
  })
  .openapi('Statistics', { description: 'Appliance-wide figures; not filtered by device-group scope' });

export type StatisticsDto = z.infer<typeof StatisticsSchema>;

export function toStatisticsDto(s: Statistics): StatisticsDto {
  return {
    ...s,
    total_devices: s.devices.total,
    unreachable_devices: s.devices.unreachable,
    failed_backups_24h: s.backups.last_24h.failed,
  };
}
