// The channels of an SSH connection: a PTY shell as the session driver's TerminalStream, and one command per exec channel.
import type { Client, ClientChannel } from 'ssh2';
import { CollectError } from '../types';
import { formatBytes } from '../../lib/bytes';
import type { TerminalStream } from '../session';
import { formatSeconds } from './tcp';

export interface ExecResult {
  /** stdout only: stderr is counted against the limit but not kept. */
  output: Buffer;
  /** null when the device sent no exit status (many network OSes never do). */
  exit_code: number | null;
}

/** Output allowance shared by all exec channels of one backup. */
export interface ByteBudget {
  used: number;
  max: number;
  /** Told the size of every chunk received, as it arrives. */
  onReceived?: (bytes: number) => void;
}

export function channelStream(channel: ClientChannel, client: Client): TerminalStream {
  return {
    write: (text) => {
      if (channel.writable) channel.write(text);
    },
    onData: (listener) => {
      channel.on('data', listener);
      channel.stderr.on('data', listener);
    },
    onClose: (listener) => {
      let called = false;
      const once = () => {
        if (!called) {
          called = true;
          listener();
        }
      };
      channel.once('close', once);
      client.once('close', once);
    },
    close: () => {
      channel.end();
      client.end();
    },
  };
}

export function runExec(
  client: Client,
  command: string,
  limits: { idle_ms: number; budget: ByteBudget },
  where: string,
  isClosed: () => boolean,
  signal?: AbortSignal,
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    client.exec(command, (err, channel) => {
      if (err) {
        reject(new CollectError('COMMAND_FAILED', `${where} refused to run '${command}' over an SSH exec channel — try a shell-mode template.`, true));
        return;
      }
      const chunks: Buffer[] = [];
      let exitCode: number | null = null;
      let lastData = Date.now();
      let done = false;
      const finish = (failure: Error | null) => {
        if (done) return;
        done = true;
        clearTimeout(idleTimer);
        signal?.removeEventListener('abort', onAbort);
        client.removeListener('close', onClientClose);
        if (failure) {
          channel.destroy();
          reject(failure);
        } else {
          resolve({ output: Buffer.concat(chunks), exit_code: exitCode });
        }
      };
      const onAbort = () => finish(signal?.reason as Error);
      signal?.addEventListener('abort', onAbort, { once: true });
      const count = (chunk: Buffer) => {
        limits.budget.used += chunk.length;
        limits.budget.onReceived?.(chunk.length);
        lastData = Date.now();
        if (limits.budget.used > limits.budget.max) {
          finish(new CollectError('OUTPUT_TOO_LARGE', `The device sent more than ${formatBytes(limits.budget.max)} of output; the backup was stopped.`, true));
          return false;
        }
        return true;
      };
      channel.on('data', (chunk: Buffer) => {
        if (count(chunk)) chunks.push(chunk);
      });
      channel.stderr.on('data', (chunk: Buffer) => {
        count(chunk);
      });
      channel.on('exit', (code: number | null) => {
        if (typeof code === 'number') exitCode = code;
      });
      channel.on('close', () => {
        // A channel closed by a dropped connection never reports an exit status.
        if (isClosed() && exitCode === null) {
          setImmediate(() => finish(new CollectError('DISCONNECTED', `The device closed the connection while running '${command}'.`, true)));
        } else {
          finish(null);
        }
      });
      const onClientClose = () =>
        finish(exitCode === null ? new CollectError('DISCONNECTED', `The device closed the connection while running '${command}'.`, true) : null);
      client.once('close', onClientClose);
      const onIdle = () => {
        const idle = Date.now() - lastData;
        if (idle >= limits.idle_ms) {
          finish(
            new CollectError('TIMEOUT', `The device stopped answering while running '${command}' (no output for ${formatSeconds(limits.idle_ms)}).`, true),
          );
        } else {
          idleTimer = setTimeout(onIdle, limits.idle_ms - idle);
        }
      };
      let idleTimer = setTimeout(onIdle, limits.idle_ms);
    });
  });
}
