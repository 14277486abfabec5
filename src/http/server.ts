// Starts the HTTP(S) listener for the app and stops it gracefully.
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';
import type { AppConfig } from '../config/config';
import { parseListen } from '../config/config';
import type { AppEnv } from './context';

export interface RunningServer {
  server: ServerType;
  url: string;
  close(): Promise<void>;
}

export function startServer(app: Hono<AppEnv>, config: Readonly<AppConfig>): Promise<RunningServer> {
  const { host, port } = parseListen(config.server.listen);
  const tls = config.server.tls_cert
    ? { cert: readFileSync(config.server.tls_cert), key: readFileSync(config.server.tls_key) }
    : null;
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
              // Stop accepting, let in-flight requests finish, drop idle keep-alive sockets.
              server.close(() => res());
              (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
              setTimeout(() => (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.(), 10_000).unref();
            }),
        });
      },
    );
    server.once('error', reject);
  });
}
