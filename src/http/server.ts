// Starts the HTTP(S) listener for the app and stops it gracefully.
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';
import type { AppConfig } from '../config/config';
import { ConfigError, parseListen } from '../config/config';
import type { AppEnv } from './context';

export interface RunningServer {
  server: ServerType;
  url: string;
  close(): Promise<void>;
}

/** Read the certificate and key named by the config; a problem is reported against the key that names the file. */
export function loadTls(config: Readonly<AppConfig>): { cert: Buffer; key: Buffer } | null {
  const { tls_cert, tls_key } = config.server;
  if (!tls_cert) return null;
  const read = (key: string, file: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new ConfigError(`invalid configuration: server.${key}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  };
  const tls = { cert: read('tls_cert', tls_cert), key: read('tls_key', tls_key) };
  try {
    createSecureContext(tls);
  } catch (err) {
    const msg = (err as Error).message.split('\n')[0];
    throw new ConfigError(`invalid configuration: server.tls_cert/server.tls_key: not a usable certificate and key (${msg})`);
  }
  return tls;
}

export function startServer(app: Hono<AppEnv>, config: Readonly<AppConfig>): Promise<RunningServer> {
  const { host, port } = parseListen(config.server.listen);
  const tls = loadTls(config);
  return new Promise((resolve, reject) => {
    const server = serve(
      {
        fetch: app.fetch,
        hostname: host,
        port,
        ...(tls ? { createServer: createHttpsServer, serverOptions: tls } : {}),
      },
      (info: AddressInfo) => {
        const shownHost = info.family === 'IPv6' ? `[${info.address}]` : info.address;
        const url = `${tls ? 'https' : 'http'}://${shownHost}:${info.port}`;
        resolve({
          server,
          url,
          close: () =>
            new Promise<void>((res) => {
              // Stop accepting, let in-flight requests finish and answer them with "Connection: close"
              // (a keep-alive client would otherwise hold the process until its idle timeout), drop idle sockets.
              closing = true;
              for (const r of inFlight) if (!r.headersSent) r.shouldKeepAlive = false;
              server.close(() => res());
              (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
              setTimeout(() => (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.(), 10_000).unref();
            }),
        });
      },
    );
    let closing = false;
    const inFlight = new Set<ServerResponse>();
    // One shared listener function, not a closure per response: this runs for every request.
    function settled(this: ServerResponse) {
      inFlight.delete(this);
    }
    server.on('request', (_req, res: ServerResponse) => {
      if (closing) res.shouldKeepAlive = false;
      inFlight.add(res);
      res.on('close', settled);
    });
    server.once('error', reject);
  });
}
