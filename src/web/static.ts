// The web interface's CSS and script: read once from src/web/static/ (assets in the executable), served with an ETag and a long cache.
import { createHash } from 'node:crypto';
import type { Hono } from 'hono';
import type { WebEnv } from './web-context';
import { listAssets, readAsset } from '../runtime/assets';

const TYPES: Record<string, string> = {
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  ico: 'image/x-icon',
};

interface StaticFile {
  body: Buffer;
  type: string;
  etag: string;
}

let files: Map<string, StaticFile> | undefined;

function load(): Map<string, StaticFile> {
  if (files) return files;
  files = new Map();
  for (const key of listAssets('src/web/static')) {
    const name = key.slice('src/web/static/'.length);
    const body = readAsset(key);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    files.set(name, { body, type: TYPES[name.split('.').pop() ?? ''] ?? 'application/octet-stream', etag });
  }
  return files;
}

/** URL of a static file with its content hash, so a new build's file is never taken from an old cache. */
export function staticUrl(name: string): string {
  const f = load().get(name);
  return `/static/${name}${f ? `?v=${f.etag.slice(1, 11)}` : ''}`;
}

export function registerStatic(web: Hono<WebEnv>): void {
  web.get('/static/:name', (c) => {
    const f = load().get(c.req.param('name'));
    if (!f) return c.text('Not found', 404);
    const headers = { 'Content-Type': f.type, ETag: f.etag, 'Cache-Control': 'public, max-age=31536000, immutable' };
    // Compression makes the ETag weak (W/"…"), and the browser sends it back that way.
    if (c.req.header('If-None-Match')?.replace(/^W\//, '') === f.etag) return c.body(null, 304, headers);
    return c.body(new Uint8Array(f.body), 200, headers);
  });
}
