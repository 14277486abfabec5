// The syslog listener of `serve`: UDP and TCP sockets on [events] syslog_listen, bounded, handing messages to a callback.
import dgram from 'node:dgram';
import net from 'node:net';
import { parseListen } from '../config/config';
import { MAX_MESSAGE_BYTES, SyslogFramer } from './syslog';
import { udpDropCounter } from './udp-drops';

export interface ReceiverOptions {
  /** HOST:PORT, as [events] syslog_listen; port 0 picks a free port (UDP and TCP then differ). */
  listen: string;
  onMessage(address: string, raw: string): void;
  /** Simultaneous TCP connections (default 256); more are refused at accept. */
  maxConnections?: number;
  /** A TCP connection silent this long is closed (default 10 minutes). */
  idleMs?: number;
  /** The UDP socket's receive buffer to ask the kernel for, in bytes (0 or unset: the kernel's default). */
  udpReceiveBufferBytes?: number;
}

export interface ReceiverStats {
  udp_messages: number;
  tcp_messages: number;
  /** Datagrams or TCP frames over MAX_MESSAGE_BYTES, dropped (a TCP connection sending one is closed). */
  oversize: number;
  tcp_connections: number;
}

export interface SyslogReceiver {
  udpPort: number;
  tcpPort: number;
  stats: ReceiverStats;
  /** The UDP receive buffer the kernel granted, in bytes as it reports them (Linux doubles the request, capped by net.core.rmem_max). */
  udpReceiveBuffer: number;
  /** Datagrams the kernel dropped on the UDP socket since it was bound (its buffer was full); null where unknown (no /proc). */
  udpDrops: (() => number) | null;
  close(): Promise<void>;
}

/** Binds UDP and TCP on the same address; rejects (nothing left bound) when either cannot be bound. */
export async function startSyslogReceiver(opts: ReceiverOptions): Promise<SyslogReceiver> {
  const { host, port } = parseListen(opts.listen);
  const stats: ReceiverStats = { udp_messages: 0, tcp_messages: 0, oversize: 0, tcp_connections: 0 };
  const udp = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4' });
  udp.on('message', (buf, rinfo) => {
    if (buf.length > MAX_MESSAGE_BYTES) return void stats.oversize++;
    stats.udp_messages++;
    opts.onMessage(rinfo.address, buf.toString('utf8'));
  });
  await new Promise<void>((resolve, reject) => {
    udp.once('error', reject);
    udp.bind(port, host, () => {
      udp.removeListener('error', reject);
      resolve();
    });
  });
  // A receive error (ICMP unreachable on some systems) must not end the process.
  udp.on('error', () => undefined);
  if (opts.udpReceiveBufferBytes) {
    try {
      udp.setRecvBufferSize(opts.udpReceiveBufferBytes);
    } catch {
      // Refused by the system: the default buffer stays, and the granted size is reported.
    }
  }

  const sockets = new Set<net.Socket>();
  const idleMs = opts.idleMs ?? 10 * 60_000;
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    stats.tcp_connections++;
    const framer = new SyslogFramer();
    const address = socket.remoteAddress ?? '';
    socket.setTimeout(idleMs, () => socket.destroy());
    socket.on('data', (chunk) => {
      // latin1 keeps one char per byte, so octet counts are exact; each message is decoded as UTF-8 afterwards.
      const r = framer.push(chunk.toString('latin1'));
      for (const m of r.messages) {
        stats.tcp_messages++;
        opts.onMessage(address, Buffer.from(m, 'latin1').toString('utf8'));
      }
      if (r.error) {
        stats.oversize++;
        socket.destroy();
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
  });
  tcp.maxConnections = opts.maxConnections ?? 256;
  try {
    await new Promise<void>((resolve, reject) => {
      tcp.once('error', reject);
      tcp.listen(port === 0 ? 0 : port, host, () => {
        tcp.removeListener('error', reject);
        resolve();
      });
    });
  } catch (e) {
    udp.close();
    throw e;
  }
  tcp.on('error', () => undefined);

  const udpPort = udp.address().port;
  return {
    udpPort,
    tcpPort: (tcp.address() as net.AddressInfo).port,
    stats,
    udpReceiveBuffer: udp.getRecvBufferSize(),
    udpDrops: udpDropCounter(udpPort),
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
    },
  };
}
