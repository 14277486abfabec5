// Opening the TCP connection to a device, with connection failures classified the way a network engineer reads them.
import dns from 'node:dns/promises';
import net from 'node:net';
import { CollectError } from '../types';

export interface TcpOptions {
  host: string;
  port: number;
  timeout_ms: number;
  /** "SSH" or "Telnet", named in the refusal message. */
  service: string;
  signal?: AbortSignal;
}

/** "host:port", with brackets around IPv6 literals. */
export function describeEndpoint(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** Human duration for messages: "30 s", "0.5 s". */
export function formatSeconds(ms: number): string {
  const s = ms / 1000;
  return `${Number.isInteger(s) ? s : s.toFixed(1)} s`;
}

function classifySocketError(err: NodeJS.ErrnoException, o: TcpOptions): CollectError {
  const where = describeEndpoint(o.host, o.port);
  switch (err.code) {
    case 'ECONNREFUSED':
      return new CollectError('CONNECTION_REFUSED', `Connection refused by ${where} — is ${o.service} enabled on the device?`, false);
    case 'ENOTFOUND':
    case 'EAI_NONAME':
    case 'EAI_NODATA':
      return new CollectError('DNS_ERROR', `The host name ${o.host} could not be resolved (DNS lookup failed).`, false);
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new CollectError('DNS_ERROR', `The DNS lookup for ${o.host} failed (name server unavailable or not answering).`, false);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ENETDOWN':
    case 'EHOSTDOWN':
    case 'EADDRNOTAVAIL':
      return new CollectError('NETWORK_UNREACHABLE', `No route to ${o.host} (network unreachable).`, false);
    case 'ETIMEDOUT':
      return new CollectError('TIMEOUT', `No answer from ${where} within the connection time limit — is the device up and the port reachable?`, false);
    case 'ECONNRESET':
    case 'EPIPE':
      return new CollectError('DISCONNECTED', `The connection to ${where} was reset while connecting.`, false);
    default:
      return new CollectError('NETWORK_UNREACHABLE', `Could not connect to ${where} (${err.code ?? 'socket error'}).`, false);
  }
}

/**
 * Resolves the name on its own first, so a slow or dead name server is reported as a DNS problem
 * rather than as a connection timeout.
 */
async function resolveHost(o: TcpOptions): Promise<string> {
  if (net.isIP(o.host)) return o.host;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new CollectError('DNS_ERROR', `The DNS lookup for ${o.host} did not answer within ${formatSeconds(o.timeout_ms)}.`, false)),
      o.timeout_ms,
    );
    onAbort = () => reject(o.signal?.reason);
    o.signal?.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const found = await Promise.race([dns.lookup(o.host), stop]);
    return found.address;
  } catch (err) {
    if (o.signal?.aborted || err instanceof CollectError) throw o.signal?.aborted ? o.signal.reason : err;
    throw classifySocketError(err as NodeJS.ErrnoException, o);
  } finally {
    clearTimeout(timer);
    if (onAbort) o.signal?.removeEventListener('abort', onAbort);
  }
}

/** Connects, or rejects with a classified CollectError (or the signal's reason when aborted). */
export async function connectTcp(o: TcpOptions): Promise<net.Socket> {
  if (o.signal?.aborted) throw o.signal.reason;
  const address = await resolveHost(o);
  return openSocket(o, address);
}

function openSocket(o: TcpOptions, address: string): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    if (o.signal?.aborted) {
      reject(o.signal.reason);
      return;
    }
    const sock = net.connect({ host: address, port: o.port });
    const done = (err: Error | null) => {
      clearTimeout(timer);
      o.signal?.removeEventListener('abort', onAbort);
      sock.removeListener('error', onError);
      sock.removeListener('connect', onConnect);
      if (err) {
        sock.destroy();
        reject(err);
      } else {
        resolve(sock);
      }
    };
    const onAbort = () => done(o.signal?.reason as Error);
    const onError = (err: NodeJS.ErrnoException) => done(classifySocketError(err, o));
    const onConnect = () => {
      sock.setNoDelay(true);
      sock.setKeepAlive(true, 30_000);
      done(null);
    };
    const timer = setTimeout(
      () =>
        done(
          new CollectError(
            'TIMEOUT',
            `No answer from ${describeEndpoint(o.host, o.port)} within ${formatSeconds(o.timeout_ms)} — is the device up and the port reachable?`,
            false,
          ),
        ),
      o.timeout_ms,
    );
    sock.once('error', onError);
    sock.once('connect', onConnect);
    o.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** What one device socket may deliver in one turn of the event loop before it pauses until the next. */
const BYTES_PER_TURN = 256 * 1024;

/**
 * Reads at most about BYTES_PER_TURN of `sock` per turn of the event loop, then pauses the socket until the next turn.
 * A device sending megabytes (a 30 MB configuration, decrypted and fed to the terminal model as it comes) then takes
 * its turn with HTTP requests and other devices instead of holding the loop for as much as the kernel buffered.
 * Call once the protocol's own 'data' listener is attached (an earlier listener would start the flow without it).
 */
export function readInTurns(sock: net.Socket): void {
  let read = 0;
  const resume = () => {
    read = 0;
    if (!sock.destroyed) sock.resume();
  };
  sock.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read < BYTES_PER_TURN || sock.isPaused()) return;
    sock.pause();
    setImmediate(resume);
  });
}

/**
 * What is written to `sock` in one turn of the event loop leaves in one system call at its end, not one per write: ssh2
 * writes every SSH packet on its own, and a client sends several in a row (a pty and a shell request, the last command,
 * EOF and disconnect), a server its output, prompt, exit status and close. The same bytes in the same order, in fewer
 * TCP segments (collectors-bench, #27: socket writes were a sixth of a site's CPU, a quarter of a simulator's).
 */
export function writesInTurns(sock: net.Socket): void {
  const write = sock.write.bind(sock) as (...args: unknown[]) => boolean;
  let corked = false;
  const uncork = () => {
    corked = false;
    sock.uncork();
  };
  sock.write = (...args: unknown[]) => {
    if (!corked) {
      corked = true;
      sock.cork();
      process.nextTick(uncork);
    }
    return write(...args);
  };
}
