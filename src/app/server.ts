// Starts the HTTP(S) listener for the app (time limits, Node-level refusals in the error shape, listen failures) and stops it gracefully.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  STATUS_CODES,
  ServerResponse,
  createServer as createHttpServer,
  type IncomingMessage,
  type OutgoingHttpHeader,
  type OutgoingHttpHeaders,
  type ServerOptions as HttpServerOptions,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { createSecureContext } from 'node:tls';
import type { ServerType } from '@hono/node-server';
import { getRequestListener } from '@hono/node-server';
import type { Hono } from 'hono';
import type { AppConfig } from '../config/config';
import { ConfigError, parseListen } from '../config/config';
import type { ErrorCode } from '../errors';
import type { AppEnv } from '../http/context';
import { screenRequestTarget } from '../http/malformed';

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

/** The listener could not bind: one line naming the address, the cause and what to do. */
export class ListenError extends Error {}

const LISTEN_ADVICE: Record<string, string> = {
  EADDRINUSE: 'address already in use: another process holds this port; stop it or choose another address (--listen or server.listen)',
  EACCES: 'permission denied: ports below 1024 need privileges; use a higher port or grant CAP_NET_BIND_SERVICE',
  EADDRNOTAVAIL: 'address not available on this machine; check server.listen',
  ENOTFOUND: 'host name not found; check server.listen',
  EAI_AGAIN: 'host name lookup failed; check server.listen',
};

function listenError(listen: string, err: NodeJS.ErrnoException): ListenError {
  const cause = (err.code && LISTEN_ADVICE[err.code]) ?? `${err.code ?? 'error'}: ${err.message}`;
  return new ListenError(`cannot listen on ${listen}: ${cause}`);
}

/** An unread request body up to this size is drained after the response and the connection kept (it is mostly in buffers already). */
const DRAINED_BODY_BYTES = 64 * 1024;

/** How long a connection refused mid-body keeps reading (and discarding) what the client still sends. */
const LINGER_MS = 5000;

/**
 * Closes a connection whose client may still be sending a body the server refused: first only its sending side, then
 * reading (and discarding) for at most LINGER_MS, as web servers' lingering close does. Destroying it at once makes
 * the kernel answer the client's next bytes with a reset, and the client loses the 413 it was sent (EPIPE).
 */
function lingeringClose(this: Duplex & { lingering?: boolean }): void {
  if (this.destroyed || this.lingering) return;
  this.lingering = true;
  const timer = setTimeout(() => this.destroy(), LINGER_MS);
  timer.unref();
  this.once('close', () => clearTimeout(timer));
  this.end();
  this.resume();
}

/**
 * A response that closes its connection when it goes out before a larger request body has arrived (a 401, 413 or
 * 415 refused before reading): the adapter drains such a body only for a bounded time and then drops the socket,
 * under a client that was told `keep-alive` and sends its next request there. `Connection: close` tells it not to,
 * and the connection closes lingering (above), so the client reads the answer whatever it still had to send.
 */
class BodyAwareResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override writeHead(statusCode: number, statusMessage?: string, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  override writeHead(statusCode: number, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this;
  override writeHead(statusCode: number, ...rest: unknown[]): this {
    const req = this.req;
    if (!req.complete) {
      const length = req.headers['content-length'];
      if (length === undefined || !(Number(length) <= DRAINED_BODY_BYTES)) {
        this.shouldKeepAlive = false;
        // Node closes a connection that is not kept alive with destroySoon once the response is out.
        const socket = this.socket as (Duplex & { destroySoon?: () => void }) | null;
        if (socket) socket.destroySoon = lingeringClose;
      }
    }
    return (super.writeHead as (code: number, ...more: unknown[]) => this).call(this, statusCode, ...rest);
  }
}

/** What Node answers itself (before any handler): the API's error body and an X-Request-ID, then the connection closes. */
function errorBody(code: ErrorCode, message: string, id?: string): { requestId: string; body: string } {
  const requestId = id ?? randomUUID();
  return { requestId, body: JSON.stringify({ error: { code, message, request_id: requestId, details: {} } }) };
}

function rawErrorResponse(status: number, code: ErrorCode, message: string, id?: string): string {
  const { requestId, body } = errorBody(code, message, id);
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-ID: ${requestId}\r\n` +
    'Cache-Control: no-store\r\n' +
    'Connection: close\r\n\r\n' +
    body
  );
}

function clientErrorAnswer(err: NodeJS.ErrnoException): [number, ErrorCode, string] {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, 'REQUEST_TIMEOUT', 'The request did not arrive in time'];
  if (err.code === 'HPE_HEADER_OVERFLOW') return [431, 'HEADERS_TOO_LARGE', 'Request headers too large'];
  return [400, 'BAD_REQUEST', 'Malformed HTTP request'];
}

/**
 * A request Node refuses below the app (malformed, headers too large, too slow): answered in the API's error shape
 * when nothing of a response has gone out yet on that connection, then the socket is closed.
 */
function onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  const pending = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (err.code !== 'ECONNRESET' && socket.writable && !(pending && pending.headersSent)) {
    const [status, code, message] = clientErrorAnswer(err);
    // A request whose body broke (a malformed chunk) already has its id and its access-log line to come: one id for both.
    const id = pending?.getHeader('x-request-id');
    socket.end(rawErrorResponse(status, code, message, typeof id === 'string' ? id : undefined));
    // A client that reads nothing must not keep the socket.
    setTimeout(() => socket.destroy(), 1000).unref();
  } else {
    socket.destroy();
  }
}

export function startServer(app: Hono<AppEnv>, config: Readonly<AppConfig>): Promise<RunningServer> {
  const { host, port } = parseListen(config.server.listen);
  const tls = loadTls(config);
  const honoListener = getRequestListener(app.fetch, { hostname: host });
  // Node's own answer to an HTTP/1.1 request without Host is a bare 400: answer it here, in the error shape.
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    if (req.headers.host === undefined && req.httpVersion === '1.1') {
      const { requestId, body } = errorBody('BAD_REQUEST', 'Missing Host header');
      res.shouldKeepAlive = false;
      res
        .writeHead(400, {
          'Content-Type': 'application/json',
          'Content-Length': Buffer.byteLength(body),
          'X-Request-ID': requestId,
          'Cache-Control': 'no-store',
        })
        .end(body);
      return;
    }
    screenRequestTarget(req);
    void honoListener(req, res);
  };
  const serverOptions: HttpServerOptions = {
    headersTimeout: config.server.header_timeout * 1000,
    requestTimeout: config.server.request_timeout * 1000,
    // Checked every second (Node's default is 30 s): a time limit holds to within a second.
    connectionsCheckingInterval: 1000,
    requireHostHeader: false,
    ServerResponse: BodyAwareResponse,
  };
  const server: ServerType = tls ? createHttpsServer({ ...serverOptions, ...tls }, listener) : createHttpServer(serverOptions, listener);
  server.on('clientError', onClientError);
  return new Promise((resolve, reject) => {
    const onListenError = (err: NodeJS.ErrnoException) => {
      server.close();
      reject(listenError(config.server.listen, err));
    };
    server.once('error', onListenError);
    server.listen(port, host, () => {
      server.removeListener('error', onListenError);
      const info = server.address() as AddressInfo;
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
    });
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
  });
}
