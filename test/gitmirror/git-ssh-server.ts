// A real git server over SSH for the mirror's tests: an ssh2 Server on 127.0.0.1 that accepts one public key and runs git's own receive-pack/upload-pack on bare repositories.
import { spawn } from 'node:child_process';
import { timingSafeEqual } from 'node:crypto';
import path from 'node:path';
import ssh2 from 'ssh2';
import type { Connection, ParsedKey, Server } from 'ssh2';
import { LoopbackServer } from './loopback';

const { Server: SshServer, utils } = ssh2;

/** An OpenSSH key pair, as ssh-keygen would write it (no passphrase unless given). */
export function sshKeyPair(passphrase?: string): { private: string; public: string } {
  // ssh2's generator now and then writes an ed25519 key its own parser refuses (about 1 in 150): take the next one.
  for (let i = 0; ; i++) {
    const pair = utils.generateKeyPairSync('ed25519', passphrase ? { passphrase, cipher: 'aes256-ctr', rounds: 4 } : {});
    if (!(utils.parseKey(pair.private, passphrase) instanceof Error) || i >= 20) return pair;
  }
}

function parsed(text: string): ParsedKey {
  const key = utils.parseKey(text);
  if (key instanceof Error) throw key;
  return key;
}

export class GitSshServer extends LoopbackServer<Server> {
  private readonly clients = new Set<Connection>();
  private readonly hostKey: string;
  private readonly allowed: ParsedKey[];
  /** The commands the server ran, in order (a test can see the transport did what git does). */
  readonly commands: string[] = [];
  /** Set: the next session is cut as soon as the client starts sending its push (a connection lost mid-push). */
  cutNextPush = false;

  /** `root` holds bare repositories; only the given public keys may log in, as any user. */
  constructor(
    private readonly root: string,
    clientPublicKeys: string[],
    hostKey = sshKeyPair().private,
  ) {
    super();
    this.hostKey = hostKey;
    this.allowed = clientPublicKeys.map(parsed);
  }

  /** The host key line as `ssh-keyscan` prints it. */
  keyscanLine(): string {
    const pub = parsed(this.hostKey);
    return `[127.0.0.1]:${this.port} ${pub.type} ${pub.getPublicSSH().toString('base64')}`;
  }

  url(repo: string): string {
    return `ssh://git@127.0.0.1:${this.port}/${repo}`;
  }

  protected create(): Server {
    return new SshServer({ hostKeys: [this.hostKey] }, (client) => this.accept(client));
  }

  protected dropConnections(): void {
    for (const c of this.clients) c.end();
  }

  private accept(client: Connection): void {
    this.clients.add(client);
    client.on('close', () => this.clients.delete(client));
    client.on('error', () => undefined);
    client.on('authentication', (ctx) => {
      if (ctx.method !== 'publickey') return ctx.reject(['publickey']);
      const key = this.allowed.find(
        (k) => ctx.key.algo === k.type && ctx.key.data.length === k.getPublicSSH().length && timingSafeEqual(ctx.key.data, k.getPublicSSH()),
      );
      if (!key) return ctx.reject(['publickey']);
      if (!ctx.signature || !ctx.blob) return ctx.accept(); // the key check before signing
      if (key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) === true) ctx.accept();
      else ctx.reject(['publickey']);
    });
    client.on('ready', () =>
      client.on('session', (acceptSession) =>
        acceptSession().on('exec', (acceptExec, rejectExec, info) => {
          const m = /^(git-receive-pack|git-upload-pack) '([^']+)'$/.exec(info.command);
          this.commands.push(info.command);
          if (!m) return rejectExec();
          const channel = acceptExec();
          const repo = path.join(this.root, path.normalize(m[2]).replace(/^(\.\.(\/|$))+/, ''));
          const child = spawn(m[1], [repo], { env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
          if (this.cutNextPush) {
            this.cutNextPush = false;
            channel.once('data', () => {
              child.kill();
              client.end();
            });
          }
          // A client gone mid-push leaves git's stdin closed under the pipe: EPIPE is the expected end, not a failure.
          child.stdin.on('error', () => undefined);
          channel.pipe(child.stdin);
          child.stdout.pipe(channel, { end: false });
          child.stderr.pipe(channel.stderr, { end: false });
          child.on('close', (code) => {
            channel.exit(code ?? 1);
            channel.end();
          });
        }),
      ),
    );
  }
}
