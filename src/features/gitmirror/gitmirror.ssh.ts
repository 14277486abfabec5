// The mirror's SSH transport: an isomorphic-git `http` plugin that speaks git's smart protocol (v1) over an ssh2 exec channel.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { Readable } from 'node:stream';
import ssh2 from 'ssh2';
import type { ClientChannel, ParsedKey, PublicKeyAuthMethod } from 'ssh2';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';

const { Client, utils } = ssh2;

/** Where an ssh:// or scp-like (user@host:path) remote points. */
export interface SshTarget {
  user: string;
  host: string;
  port: number;
  path: string;
}

/** What the transport needs besides the target: the resolved address, the key and the pinned host key. */
export interface SshAuth {
  address: string;
  keyFile: string;
  passphraseFile: string;
  knownHost: string;
  acceptAnyHostKey: boolean;
}

const SCP_LIKE = /^([^/@:\s]+)@([^/@:\s]+):(.+)$/;
const READY_TIMEOUT_MS = 20_000;
/** A push that is still running after this is cut: the next round tries again (with backoff). */
const PUSH_TIMEOUT_MS = 10 * 60_000;

/** `ssh://[user@]host[:port]/path` or `user@host:path` (the path as the server's shell sees it); the user defaults to git. */
export function parseSshUrl(url: string): SshTarget {
  const scp = SCP_LIKE.exec(url);
  if (scp && !url.startsWith('ssh://')) return { user: scp[1], host: scp[2], port: 22, path: scp[3] };
  const u = new URL(url);
  return {
    user: decodeURIComponent(u.username) || 'git',
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : 22,
    path: decodeURIComponent(u.pathname),
  };
}

/** OpenSSH's fingerprint of a host key blob: "SHA256:" + unpadded base64. */
export function sshFingerprint(blob: Buffer): string {
  return 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '');
}

/** The pinned key's fingerprint, from a SHA256 fingerprint or an `ssh-keyscan` / known_hosts line. */
export function pinnedFingerprint(knownHost: string): string {
  const text = knownHost.trim();
  if (text.startsWith('SHA256:')) return text.replace(/=+$/, '');
  const words = text.split(/\s+/);
  const type = words.findIndex((w) => /^(ssh-|ecdsa-|sk-)/.test(w));
  const blob = type >= 0 ? words[type + 1] : undefined;
  if (!blob) throw new Error('known_host is neither a SHA256 fingerprint nor an ssh-keyscan line');
  return sshFingerprint(Buffer.from(blob, 'base64'));
}

function parseKey(keyFile: string, passphraseFile: string): ParsedKey {
  const passphrase = passphraseFile ? fs.readFileSync(passphraseFile, 'utf8').replace(/\r?\n$/, '') : undefined;
  const parsed: ParsedKey | ParsedKey[] | Error = utils.parseKey(fs.readFileSync(keyFile), passphrase);
  const key = Array.isArray(parsed) ? (parsed as ParsedKey[])[0] : parsed;
  // ssh2's message never holds the key; the file name is enough to act on.
  if (key instanceof Error || !key) throw new Error(`ssh_key_file ${keyFile} could not be read${passphrase ? ' with the passphrase given' : ''}`);
  return key;
}

function quote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

function pkt(text: string): Buffer {
  const body = Buffer.from(text, 'utf8');
  return Buffer.concat([Buffer.from((body.length + 4).toString(16).padStart(4, '0')), body]);
}

/** Index just past the first flush-pkt ("0000") at a pkt-line boundary, or -1 while it has not arrived yet. */
function flushEnd(buf: Buffer): number {
  for (let pos = 0; pos + 4 <= buf.length;) {
    const len = parseInt(buf.toString('latin1', pos, pos + 4), 16);
    if (Number.isNaN(len)) throw new Error('the remote did not answer with git pkt-lines');
    if (len === 0) return pos + 4;
    pos += len;
  }
  return -1;
}

/**
 * One SSH session for one push. isomorphic-git is handed an http(s) URL and this client: its GET
 * `info/refs?service=S` opens an exec channel running `S '<path>'` and answers with the ref advertisement (behind
 * the `# service=` line smart HTTP adds); its POST `/S` writes the request to the same channel and answers with
 * what the remote prints until it exits. close() ends the session in every case.
 */
export class SshGitSession {
  private client: InstanceType<typeof Client> | null = null;
  private channel: ClientChannel | null = null;
  private reader: AsyncIterator<Buffer> | null = null;
  private leftover = Buffer.alloc(0);
  private stderr = '';
  private seenHostKey: string | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly target: SshTarget,
    private readonly auth: SshAuth,
  ) {}

  readonly http: HttpClient = { request: (req) => this.request(req) };

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.client?.end();
    this.client = null;
  }

  private async request(req: GitHttpRequest): Promise<GitHttpResponse> {
    const url = new URL(req.url);
    const service = url.searchParams.get('service') ?? url.pathname.split('/').pop() ?? '';
    if (service !== 'git-receive-pack' && service !== 'git-upload-pack') throw new Error(`ssh transport: no such git service ${service}`);
    const headers = { 'content-type': `application/x-${service}-${req.method === 'POST' ? 'result' : 'advertisement'}` };
    const answer = (body: AsyncIterableIterator<Uint8Array>): GitHttpResponse => ({
      url: req.url,
      method: req.method,
      headers,
      body,
      statusCode: 200,
      statusMessage: 'OK',
    });
    if (req.method !== 'POST') {
      const advertisement = await this.open(service);
      return answer(once([pkt(`# service=${service}\n`), Buffer.from('0000'), advertisement]));
    }
    const channel = this.channel;
    if (!channel) throw new Error('ssh transport: POST before the ref advertisement');
    for await (const chunk of req.body ?? once([])) channel.write(chunk);
    channel.end();
    return answer(this.rest());
  }

  /** Connects (host key checked against the pin), runs the service and reads the ref advertisement up to its flush. */
  private async open(service: string): Promise<Buffer> {
    const channel = await this.exec(`${service} ${quote(this.target.path)}`);
    this.channel = channel;
    channel.stderr.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString('utf8')).slice(-2000)));
    this.reader = (channel as unknown as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
    let buf = Buffer.alloc(0);
    for (;;) {
      const end = flushEnd(buf);
      if (end >= 0) {
        this.leftover = buf.subarray(end);
        return buf.subarray(0, end);
      }
      const next = await this.reader.next();
      if (next.done) throw new Error(`the remote closed the session: ${this.stderr.trim() || 'no ref advertisement'}`);
      buf = Buffer.concat([buf, next.value]);
    }
  }

  private async *rest(): AsyncIterableIterator<Uint8Array> {
    if (this.leftover.length) yield this.leftover;
    for (let next = await this.reader!.next(); !next.done; next = await this.reader!.next()) yield next.value;
  }

  private exec(command: string): Promise<ClientChannel> {
    const { target, auth } = this;
    const pin = auth.knownHost ? pinnedFingerprint(auth.knownHost) : null;
    if (!pin && !auth.acceptAnyHostKey) throw new Error('no known_host pinned for this SSH remote (set accept_any_host_key = true to go without)');
    const where = `${target.host}:${target.port}`;
    const login: PublicKeyAuthMethod = { type: 'publickey', username: target.user, key: parseKey(auth.keyFile, auth.passphraseFile) };
    const client = new Client();
    this.client = client;
    this.timer = setTimeout(() => client.destroy(), PUSH_TIMEOUT_MS).unref();
    return new Promise((resolve, reject) => {
      // `on`, not `once`: a connection lost later in the push emits again (the channel's reader then ends with it).
      client.on('error', (err: Error & { level?: string }) => {
        if (this.seenHostKey && pin && this.seenHostKey !== pin)
          reject(new Error(`host key of ${where} is ${this.seenHostKey}, not the pinned known_host ${pin}: refused, nothing sent`));
        else if (err.level === 'client-authentication') reject(new Error(`${where} refused the key of ssh_key_file for user ${target.user}`));
        else reject(err);
      });
      client.once('ready', () =>
        client.exec(command, (err, channel) => {
          if (err) reject(err);
          else resolve(channel);
        }),
      );
      client.connect({
        host: auth.address,
        port: target.port,
        username: target.user,
        authHandler: [login],
        readyTimeout: READY_TIMEOUT_MS,
        keepaliveInterval: 15_000,
        hostVerifier: (blob: Buffer) => {
          this.seenHostKey = sshFingerprint(blob);
          return !pin || this.seenHostKey === pin;
        },
      });
    });
  }
}

/** A fixed body as the async iterator isomorphic-git reads. */
function once(chunks: Uint8Array[]): AsyncIterableIterator<Uint8Array> {
  return Readable.from(chunks)[Symbol.asyncIterator]() as AsyncIterableIterator<Uint8Array>;
}
