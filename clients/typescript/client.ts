// The TypeScript client of the confvault API v1: openapi-fetch typed by api-v1.d.ts, generated from the appliance's OpenAPI document.
import createClient from 'openapi-fetch';
import type { paths } from './api-v1';

export type { components, operations, paths } from './api-v1';

/** A client for `baseUrl` (the appliance, e.g. `https://confvault.example.net`) sending the key in X-API-Key on every request. */
export function createConfvaultClient(baseUrl: string, apiKey: string) {
  return createClient<paths>({ baseUrl: `${baseUrl.replace(/\/+$/, '')}/api/v1`, headers: { 'X-API-Key': apiKey } });
}
