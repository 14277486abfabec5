// SSH transport: connect and authenticate with ssh2, verify the host key, open PTY shells and exec channels.
import type { Socket } from 'node:net';
import ssh2 from 'ssh2';
import type { Client, Algorithms, AnyAuthMethod, AuthenticationType, KeyboardInteractiveCallback, NextAuthHandler, ParsedKey, Prompt } from 'ssh2';
import { pipelinedShell, pooledPadding, quietKeyExchange } from './ssh2-tuning';
import { CollectError } from '../types';
import type { TerminalStream } from '../session';
import { connectTcp, describeEndpoint, formatSeconds, readInTurns, writesInTurns } from './tcp';
import { channelStream, runExec, type ByteBudget, type ExecResult } from './ssh-channels';

export type { ByteBudget, ExecResult } from './ssh-channels';
import { hostKeyFingerprint, parsePrivateKey } from './ssh-keys';

// ssh2 is CommonJS without static named exports: take the namespace object (works under tsx and in the bundle).
const { Client: SshClient } = ssh2;

export interface SshOptions {
  host: string;
  port: number;
  username: string;
  password?: string | null;
  private_key?: string | null;
  passphrase?: string | null;
  known_host_key?: string | null;
  /** The one changed key a user approved ("SHA256:..."): accepted in place of known_host_key, any other refused. */
  accepted_host_key?: string | null;
  connect_timeout_ms: number;
  /** Handshake plus authentication. */
  login_timeout_ms: number;
  signal?: AbortSignal;
  /** Called once the device has answered at the SSH level (it is reachable even if login fails later). */
  onReachable?: () => void;
  /** Called with every host key fingerprint seen, so it can be reported even when the login fails. */
  onHostKey?: (fingerprint: string) => void;
}

export interface SshConnection {
  readonly host_key: string;
  /** True when the device only accepted the legacy algorithm set. */
  readonly legacy_algorithms: boolean;
  openShell(): Promise<TerminalStream>;
  /** Runs one command on its own exec channel; bytes received are added to `budget.used`. */
  exec(command: string, o: { idle_ms: number; budget: ByteBudget }): Promise<ExecResult>;
  close(): void;
}

/** Modern first: ssh2's defaults without SHA-1 host key signatures. */
const MODERN_ALGORITHMS: Algorithms = {
  serverHostKey: { append: [], prepend: [], remove: ['ssh-rsa', 'ssh-dss'] },
};

/** Old switches: SHA-1 key exchange, ssh-rsa host keys, CBC ciphers. Offered after the modern set, never instead of it. */
const LEGACY_ALGORITHMS: Algorithms = {
  kex: { append: ['diffie-hellman-group14-sha1', 'diffie-hellman-group-exchange-sha1', 'diffie-hellman-group1-sha1'], prepend: [], remove: [] },
  serverHostKey: { append: ['ssh-rsa', 'ssh-dss'], prepend: [], remove: [] },
  cipher: { append: ['aes128-cbc', 'aes192-cbc', 'aes256-cbc', '3des-cbc'], prepend: [], remove: [] },
};

/** ssh2 takes `false` for "no more methods to try"; its typings do not say so. */
const NO_MORE_METHODS = false as unknown as AnyAuthMethod;

interface SshError extends Error {
  level?: string;
  code?: string | number;
}

/** Raised by one connection attempt when the failure is about algorithms, so the caller can retry with legacy ones. */
class AlgorithmError extends Error {
  /** The device hung up during key exchange instead of saying what it lacks (old firmware does this). */
  constructor(
    message: string,
    readonly closed = false,
  ) {
    super(message);
  }
}

function authMethods(o: SshOptions, key: ParsedKey | null): AnyAuthMethod[] {
  const methods: AnyAuthMethod[] = [];
  if (key) methods.push({ type: 'publickey', username: o.username, key });
  const password = o.password;
  if (password) {
    methods.push({ type: 'password', username: o.username, password });
    let answered = false;
    methods.push({
      type: 'keyboard-interactive',
      username: o.username,
      prompt: (_name: string, _instructions: string, _lang: string, prompts: Prompt[], finish: KeyboardInteractiveCallback) => {
        // Answer the password questions once; a second round means the password was refused.
        const answers = prompts.map((p) => (p.echo ? o.username : answered ? '' : password));
        if (prompts.some((p) => !p.echo)) answered = true;
        finish(answers);
      },
    });
  }
  if (methods.length === 0) methods.push({ type: 'none', username: o.username });
  return methods;
}

/** What one connection attempt has seen so far: enough to say why it failed. */
interface AttemptState {
  /** The device sent its first bytes (it speaks, at least). */
  spoke: boolean;
  /** Key exchange done: a failure now is about the login. */
  handshook: boolean;
  hostKey: string | null;
  hostKeyRefused: boolean;
  /** Login methods tried, in order. */
  tried: AuthenticationType[];
  /** Methods the device said it accepts (null until it says). */
  offered: AuthenticationType[] | null;
}

/** AUTH_FAILED naming what was tried, or that the device accepts none of the configured methods. */
function authFailure(o: SshOptions, methods: AnyAuthMethod[], st: AttemptState, extra: string): CollectError {
  const { offered, tried } = st;
  const usable = methods.filter((m) => !offered || offered.includes(m.type));
  if (offered && usable.length === 0) {
    return new CollectError(
      'AUTH_FAILED',
      `${describeEndpoint(o.host, o.port)} does not accept any configured login method for user ${o.username} (it offers ${offered.join(', ') || 'none'}).`,
      true,
    );
  }
  const list = tried.length ? tried.join(', ') : methods.map((m) => m.type).join(', ');
  return new CollectError('AUTH_FAILED', `Authentication failed for user ${o.username} (${list})${extra}.`, true);
}

/** Why an ssh2 'error' before login ended the attempt: a classified CollectError, or an AlgorithmError worth a legacy retry. */
function errorFailure(o: SshOptions, methods: AnyAuthMethod[], st: AttemptState, err: SshError): Error {
  const where = describeEndpoint(o.host, o.port);
  if (st.hostKeyRefused) {
    return new CollectError(
      'HOST_KEY_CHANGED',
      `The SSH host key of ${where} has changed (expected ${o.known_host_key}, got ${st.hostKey}) — accept this key on the device's page if the device was replaced or re-keyed.`,
      true,
    );
  }
  if (err.level === 'client-authentication') return authFailure(o, methods, st, '');
  if (err.level === 'client-timeout') {
    const secs = formatSeconds(o.login_timeout_ms);
    if (!st.spoke) return new CollectError('TIMEOUT', `Connected to ${where} but no SSH greeting arrived within ${secs} — is this an SSH port?`, false);
    if (st.handshook) return new CollectError('TIMEOUT', `Login as ${o.username} on ${where} did not complete within ${secs}.`, true);
    return new CollectError('TIMEOUT', `The SSH handshake with ${where} did not complete within ${secs}.`, true);
  }
  if (err.level === 'handshake' && /no matching/i.test(err.message)) return new AlgorithmError(err.message.replace(/^Handshake failed:\s*/i, ''));
  if (typeof err.code === 'number' && err.code === 3 && !st.handshook) return new AlgorithmError('the device ended the key exchange');
  if (typeof err.code === 'number') {
    // An SSH DISCONNECT from the device; during login it is nearly always "too many failed attempts".
    if (st.handshook) return authFailure(o, methods, st, ' — the device closed the connection during login');
    return new CollectError('DISCONNECTED', `${where} ended the SSH connection during the handshake (${err.message}).`, true);
  }
  if (err.level === 'protocol') return new CollectError('DISCONNECTED', `${where} answered but not with a usable SSH protocol (${err.message}).`, st.spoke);
  if (!st.handshook && st.spoke) return new AlgorithmError('connection lost during key exchange', true);
  return new CollectError('DISCONNECTED', `The connection to ${where} failed during the SSH handshake (${err.message}).`, st.spoke);
}

/** Why a connection closed before login ended the attempt. */
function closeFailure(o: SshOptions, methods: AnyAuthMethod[], st: AttemptState): Error {
  if (st.handshook) return authFailure(o, methods, st, ' — the device closed the connection during login');
  if (st.spoke) return new AlgorithmError('connection closed during key exchange', true);
  return new CollectError('DISCONNECTED', `${describeEndpoint(o.host, o.port)} closed the connection before the SSH handshake.`, false);
}

/** ssh2's connect options for one attempt: the host key checked against the known one, login methods offered in order. */
function connectConfig(o: SshOptions, sock: Socket, algorithms: Algorithms, methods: AnyAuthMethod[], st: AttemptState) {
  const queue = [...methods];
  return {
    sock,
    username: o.username,
    readyTimeout: o.login_timeout_ms,
    algorithms,
    keepaliveInterval: 15_000,
    keepaliveCountMax: 4,
    hostVerifier: (raw: Buffer) => {
      const hostKey = hostKeyFingerprint(raw);
      st.hostKey = hostKey;
      o.onHostKey?.(hostKey);
      if (o.known_host_key && o.known_host_key !== hostKey && o.accepted_host_key !== hostKey) {
        st.hostKeyRefused = true;
        return false;
      }
      return true;
    },
    authHandler: (authsLeft: AuthenticationType[] | null, _partial: boolean | null, next: NextAuthHandler) => {
      if (authsLeft) st.offered = authsLeft;
      for (let m = queue.shift(); m; m = queue.shift()) {
        if (!authsLeft || authsLeft.includes(m.type)) {
          st.tried.push(m.type);
          next(m);
          return;
        }
      }
      next(NO_MORE_METHODS);
    },
  };
}

/** One connection attempt with one algorithm set: TCP, then the SSH handshake and login; settles once, on the first outcome. */
async function attempt(o: SshOptions, algorithms: Algorithms, key: ParsedKey | null): Promise<{ client: Client; host_key: string }> {
  const sock = await connectTcp({ host: o.host, port: o.port, timeout_ms: o.connect_timeout_ms, service: 'SSH', signal: o.signal });
  writesInTurns(sock);
  return new Promise((resolve, reject) => {
    const client = new SshClient();
    const st: AttemptState = { spoke: false, handshook: false, hostKey: null, hostKeyRefused: false, tried: [], offered: null };
    const methods = authMethods(o, key);
    let settled = false;
    const settle = (err: Error | null) => {
      if (settled) return;
      settled = true;
      o.signal?.removeEventListener('abort', onAbort);
      if (err) {
        client.destroy();
        reject(err);
      } else {
        resolve({ client, host_key: st.hostKey ?? '' });
      }
    };
    const onAbort = () => settle(o.signal?.reason as Error);
    o.signal?.addEventListener('abort', onAbort, { once: true });
    sock.once('data', () => {
      st.spoke = true;
      o.onReachable?.();
    });
    client.on('handshake', () => {
      st.handshook = true;
      quietKeyExchange(client);
      pooledPadding(client);
    });
    client.on('ready', () => {
      readInTurns(sock);
      settle(null);
    });
    // Later errors surface as a closed channel; the listener stays so none is unhandled.
    client.on('error', (err: SshError) => settled || settle(errorFailure(o, methods, st, err)));
    client.on('close', () => settled || settle(closeFailure(o, methods, st)));
    client.connect(connectConfig(o, sock, algorithms, methods, st));
  });
}

/**
 * Connects and logs in. Modern algorithms are offered first; when the device cannot agree on them, one more
 * attempt offers the legacy set too. Rejects with a CollectError (or the signal's reason).
 */
export async function connectSsh(o: SshOptions): Promise<SshConnection> {
  const key = parsePrivateKey(o);
  const where = describeEndpoint(o.host, o.port);
  let result: { client: Client; host_key: string };
  let legacy = false;
  try {
    result = await attempt(o, MODERN_ALGORITHMS, key);
  } catch (err) {
    if (!(err instanceof AlgorithmError)) throw err;
    legacy = true;
    try {
      result = await attempt(o, LEGACY_ALGORITHMS, key);
    } catch (again) {
      if (!(again instanceof AlgorithmError)) throw again;
      if (again.closed) {
        throw new CollectError(
          'ALGORITHM_MISMATCH',
          `${where} hung up during the SSH key exchange, also when offered legacy algorithms — check its SSH algorithm settings.`,
          true,
        );
      }
      throw new CollectError('ALGORITHM_MISMATCH', `No SSH algorithms in common with ${where} (${again.message}), even with legacy algorithms enabled.`, true);
    }
  }
  const { client, host_key } = result;
  // Errors after login surface as closed channels (the attempt's 'error' listener stays attached, so none is unhandled).
  let closed = false;
  client.on('close', () => {
    closed = true;
  });
  const onAbort = () => client.destroy();
  o.signal?.addEventListener('abort', onAbort, { once: true });

  return {
    host_key,
    legacy_algorithms: legacy,
    openShell: () =>
      new Promise((resolve, reject) => {
        // The shell request leaves with the pty request (ssh2-tuning.ts), one round trip sooner.
        const restore = pipelinedShell(client);
        client.shell({ term: 'vt100', cols: 512, rows: 1000, width: 0, height: 0 }, (err, channel) => {
          restore?.();
          if (err && closed) reject(new CollectError('DISCONNECTED', `${where} closed the connection right after login.`, true));
          else if (err) reject(new CollectError('COMMAND_FAILED', `${where} refused to open an interactive shell for user ${o.username}.`, true));
          else resolve(channelStream(channel, client));
        });
      }),
    exec: (command, limits) => runExec(client, command, limits, where, () => closed, o.signal),
    close: () => {
      o.signal?.removeEventListener('abort', onAbort);
      client.end();
    },
  };
}
