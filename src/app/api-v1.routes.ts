// The route modules of the public API, registered by explicit import (one per feature).
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv, AppServices } from '../http/context';
import * as credentialRoutes from '../features/credentials/credentials.routes';
import * as templateRoutes from '../features/templates/templates.routes';
import * as deviceRoutes from '../features/devices/devices.routes';
import * as deviceRetireRoutes from '../features/devices/devices-retire.routes';
import * as groupRoutes from '../features/groups/groups.routes';
import * as backupRoutes from '../features/backups/backups.routes';
import * as statsRoutes from '../features/stats/stats.routes';
import * as complianceRoutes from '../features/compliance/compliance.routes';
import * as complianceDeviceRoutes from '../features/compliance/compliance-devices.routes';
import * as jobRoutes from '../features/backups/jobs.routes';
import * as configRoutes from '../features/configs/configs.routes';
import * as auditRoutes from '../features/audit/audit.routes';
import * as notificationRoutes from '../features/notifications/notifications.routes';
import * as inventoryRoutes from '../features/inventory/inventory.routes';
import * as collectorRoutes from '../features/collectors/collectors-api.routes';

export interface RouteModule {
  register(api: OpenAPIHono<AppEnv>, app: AppServices): void;
}

export const API_ROUTE_MODULES: RouteModule[] = [
  credentialRoutes,
  templateRoutes,
  deviceRoutes,
  deviceRetireRoutes,
  groupRoutes,
  backupRoutes,
  statsRoutes,
  complianceRoutes,
  complianceDeviceRoutes,
  // The automation API (issue #26): additive operations beside the spec's 25.
  jobRoutes,
  configRoutes,
  auditRoutes,
  notificationRoutes,
  // Inventory sources (issue #26, docs/inventory.md).
  inventoryRoutes,
  // Remote collectors, read-only (docs/collectors.md).
  collectorRoutes,
];
