// Telnet device simulator: negotiates options like a real telnetd, asks for login and password, then replays a transcript.
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { DeviceShell, LineInput, devicePassword, deviceUsername, type DeviceIo, type SimDevice } from './device-shell';

export interface TelnetSimulatorOptions {
  /** The login name picks the device (its `name` or its username when there is only one). */
  devices: SimDevice[];
  port?: number;
  host?: string;
  /** Default: the first device's transcript `telnet.login_prompt`, else "Username: " (Cisco); "<hostname> login: " for Linux-style telnetd. */
  login_prompt?: string;
  /** Default: the first device's transcript `telnet.password_prompt`, else "Password: ". */
  password_prompt?: string;
  /** Open with option negotiation and a subnegotiation, as telnetd does (default true). */
  negotiate?: boolean;
}

export interface RunningTelnetSimulator {
  host: string;
  port: number;
  close(): Promise<void>;
}

const IAC = 255;
// DO TERMINAL-TYPE, WILL ECHO, WILL SUPPRESS-GO-AHEAD, DO NAWS, SB TERMINAL-TYPE SEND SE
const OPENING = Buffer.from([IAC, 253, 24, IAC, 251, 1, IAC, 251, 3, IAC, 253, 31, IAC, 250, 24, 1, IAC, 240]);

/** Drops the client's negotiation answers (it only ever refuses) from its keystrokes. */
function stripTelnet(chunk: Buffer, state: { inCommand: number }): string {
  let out = '';
  for (const b of chunk) {
    if (state.inCommand > 0) {
      state.inCommand--;
      continue;
    }
    if (b === IAC) {
      state.inCommand = 2; // IAC WONT/DONT <option>: the only commands a refusing client sends
      continue;
    }
    out += String.fromCharCode(b);
  }
  return out;
}

function socketIo(sock: net.Socket): DeviceIo {
  return {
    write: (data) =>
      new Promise<void>((resolve) => {
        if (!sock.writable) return resolve();
        if (sock.write(data, 'latin1')) return resolve();
        const done = () => {
          sock.removeListener('drain', done);
          sock.removeListener('close', done);
          resolve();
        };
        sock.once('drain', done);
        sock.once('close', done);
      }),
    end: () => sock.end(),
    drop: () => sock.destroy(),
    isOpen: () => sock.writable,
  };
}

export async function startTelnetSimulator(o: TelnetSimulatorOptions): Promise<RunningTelnetSimulator> {
  const host = o.host ?? '127.0.0.1';
  const byName = new Map<string, SimDevice>();
  for (const d of o.devices) byName.set(d.name, d);
  if (o.devices.length === 1) byName.set(deviceUsername(o.devices[0]), o.devices[0]);
  const sockets = new Set<net.Socket>();
  const asked = o.devices[0]?.transcript.telnet;
  const loginPrompt = o.login_prompt ?? asked?.login_prompt ?? 'Username: ';
  const passwordPrompt = o.password_prompt ?? asked?.password_prompt ?? 'Password: ';

  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.setNoDelay(true);
    const input = new LineInput();
    const state = { inCommand: 0 };
    sock.on('error', () => undefined);
    sock.on('close', () => {
      sockets.delete(sock);
      input.close();
    });
    sock.on('data', (chunk: Buffer) => input.feed(stripTelnet(chunk, state)));
    const io = socketIo(sock);
    void (async () => {
      if (o.negotiate !== false) sock.write(OPENING);
      if (asked?.press_enter) {
        await io.write(`\r\n${asked.press_enter}`);
        while ((await input.readLine(null)) !== '') {
          /* only Enter on an empty line gets past it */
        }
      }
      await io.write('\r\n\r\nUser Access Verification\r\n\r\n');
      for (let attempt = 0; attempt < 3; attempt++) {
        await io.write(loginPrompt);
        const user = await input.readLine((text) => io.write(text));
        await io.write(passwordPrompt);
        const password = await input.readLine(null);
        await io.write('\r\n');
        const d = byName.get(user);
        if (d && d.failure !== 'wrong_password' && password === devicePassword(d)) {
          await new DeviceShell(d, io, input, user).run();
          return;
        }
        await io.write('% Login invalid\r\n\r\n');
      }
      sock.end();
    })().catch(() => sock.destroy());
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port ?? 0, host, () => {
      server.removeListener('error', reject);
      resolve();
    });
  });
  return {
    host,
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
