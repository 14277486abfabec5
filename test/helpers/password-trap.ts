// A fake SSH server on 127.0.0.1 that records every password (and key) a client tries, then refuses it.
import type { AddressInfo } from 'node:net';
import ssh2 from 'ssh2';
import { ed25519KeyPair } from './keys';

export interface PasswordTrap {
  port: number;
  /** Passwords offered, in order (password and keyboard-interactive methods). */
  passwords: string[];
  /** Authentication attempts of any method, including "none" and public keys. */
  attempts: string[];
  /** TCP connections accepted. */
  connections: number;
  close(): Promise<void>;
}

export async function startPasswordTrap(): Promise<PasswordTrap> {
  const trap: Omit<PasswordTrap, 'port' | 'close'> = { passwords: [], attempts: [], connections: 0 };
  const server = new ssh2.Server({ hostKeys: [ed25519KeyPair().private] }, (conn) => {
    trap.connections++;
    conn.on('authentication', (ctx) => {
      trap.attempts.push(ctx.method);
      if (ctx.method === 'password') trap.passwords.push(ctx.password);
      if (ctx.method === 'keyboard-interactive') {
        ctx.prompt([{ prompt: 'Password: ', echo: false }], (answers) => {
          trap.passwords.push(...answers);
          ctx.reject();
        });
        return;
      }
      ctx.reject(['password', 'keyboard-interactive', 'publickey']);
    });
    conn.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    ...trap,
    get passwords() {
      return trap.passwords;
    },
    get attempts() {
      return trap.attempts;
    },
    get connections() {
      return trap.connections;
    },
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
