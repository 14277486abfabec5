// The JSON Schema of a template file, served without login so an editor's yaml-language-server modeline can point at the appliance.
import type { Hono } from 'hono';
import { readAsset } from '../../runtime/assets';
import { TEMPLATE_SCHEMA_ASSET, TEMPLATE_SCHEMA_URL_PATH } from '../../templates/files';
import type { WebEnv } from '../web-context';

let body: Buffer | undefined;

export { TEMPLATE_SCHEMA_URL_PATH };

export function registerTemplateSchema(web: Hono<WebEnv>): void {
  web.get(TEMPLATE_SCHEMA_URL_PATH, (c) => {
    // Read once: the schema ships with the executable and never changes while it runs.
    body ??= readAsset(TEMPLATE_SCHEMA_ASSET);
    return c.body(new Uint8Array(body), 200, { 'Content-Type': 'application/schema+json', 'Cache-Control': 'public, max-age=3600' });
  });
}
