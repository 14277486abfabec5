// The route modules of the public API, registered by explicit import (one per feature).
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv, AppServices } from './context';

export interface RouteModule {
  register(api: OpenAPIHono<AppEnv>, app: AppServices): void;
}

export const API_ROUTE_MODULES: RouteModule[] = [];
