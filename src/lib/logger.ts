// Structured JSON logs (pino) to stdout; known secret-bearing fields are censored defensively.
import { writeSync } from 'node:fs';
import pino, { type DestinationStream, type Logger } from 'pino';

export function createLogger(level: string, destination: NodeJS.WritableStream | number = 1): Logger {
  return pino(
    {
      level,
      base: { service: 'confvault' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['password', 'passphrase', 'private_key', 'enable_secret', 'key', 'config_text', '*.password', '*.config_text', 'headers["x-api-key"]'],
        censor: '[redacted]',
      },
      formatters: { level: (label) => ({ level: label }) },
    },
    typeof destination === 'number' ? new TurnBatchedDestination(destination) : destination,
  );
}

/** The fields of the access-log line of one request. */
export interface AccessEntry {
  request_id: string;
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  user: string | undefined;
  /** The client's address (behind a trusted proxy, the one it reports). */
  client?: string;
}

const str = JSON.stringify;

/**
 * A writer of the line every request logs, in this logger's format (level label, ISO time, bindings, fields, `msg`)
 * and to its destination, as `log.info(entry, 'request')` would write it. Built by hand because it is written for
 * every request: pino's generic serialisation with the redaction paths costs five times as much, and these fields
 * are fixed and never hold a secret.
 */
export function accessLogWriter(log: Logger): (e: AccessEntry) => void {
  const internals = log as unknown as Record<symbol, unknown>;
  const stream = internals[pino.symbols.streamSym] as DestinationStream;
  const bindings = internals[pino.symbols.chindingsSym] as string;
  return (e) => {
    if (!log.isLevelEnabled('info')) return;
    const user = (e.user === undefined ? '' : `,"user":${str(e.user)}`) + (e.client === undefined ? '' : `,"client":${str(e.client)}`);
    stream.write(
      `{"level":"info","time":"${new Date().toISOString()}"${bindings},"request_id":${str(e.request_id)},"method":${str(e.method)},` +
        `"path":${str(e.path)},"status":${e.status},"duration_ms":${e.duration_ms}${user},"msg":"request"}\n`,
    );
  };
}

const FLUSH_AT_BYTES = 64 * 1024;

/**
 * A file descriptor for pino where the lines of one event-loop turn leave in one write, right after that turn:
 * under load one system call carries the access-log lines of many requests (a write per line cost ~10 us of a
 * request's time in `npm run bench`), and a quiet server still writes each line at once. Written synchronously
 * (never lost to a pending asynchronous write) and flushed on exit.
 */
export class TurnBatchedDestination implements DestinationStream {
  private pending = '';
  private scheduled = false;

  constructor(private readonly fd: number) {
    process.once('exit', () => this.flush());
  }

  write(line: string): boolean {
    this.pending += line;
    if (this.pending.length >= FLUSH_AT_BYTES) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushAfterTurn);
    }
    return true;
  }

  private readonly flushAfterTurn = (): void => {
    this.scheduled = false;
    this.flush();
  };

  flush(): void {
    if (!this.pending) return;
    const data = Buffer.from(this.pending, 'utf8');
    this.pending = '';
    let offset = 0;
    while (offset < data.length) {
      try {
        offset += writeSync(this.fd, data, offset);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'EAGAIN') {
          // stdout is a non-blocking pipe whose reader is behind: wait a moment rather than drop lines.
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
          continue;
        }
        if (code === 'EPIPE') return; // nobody reads stdout any more
        throw err;
      }
    }
  }
}
