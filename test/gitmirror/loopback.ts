// The mirror tests' git servers on 127.0.0.1, started and stopped alike: a stopped server's port refuses connections until it starts again.
import type { AddressInfo } from 'node:net';

interface Listener {
  once(event: 'error', fn: (err: Error) => void): unknown;
  listen(port: number, host: string, fn: () => void): unknown;
  address(): unknown;
  close(fn: () => void): unknown;
}

export abstract class LoopbackServer<S extends Listener> {
  private server: S | null = null;
  /** 0 until the first start picks a free port; later starts listen on the same one. */
  port = 0;

  protected abstract create(): S;
  /** Ends the connections still open, so close() completes. */
  protected abstract dropConnections(server: S): void;

  async start(): Promise<this> {
    const server = this.create();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  /** Down: the port refuses connections until start() listens on it again. */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = null;
    if (!s) return;
    this.dropConnections(s);
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}
