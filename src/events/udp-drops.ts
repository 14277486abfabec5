// Datagrams the kernel dropped for one UDP socket of this process (its receive buffer was full): Linux's /proc/net/udp.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

const TABLES = ['/proc/net/udp', '/proc/net/udp6'];

interface UdpRow {
  port: number;
  inode: string;
  drops: number;
}

function readRows(): UdpRow[] {
  const rows: UdpRow[] = [];
  for (const table of TABLES) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode ref pointer drops
      const f = line.trim().split(/\s+/);
      if (f.length < 13) continue;
      rows.push({ port: parseInt(f[1].split(':')[1], 16), inode: f[9], drops: Number(f[12]) });
    }
  }
  return rows;
}

/** Inodes of this process's sockets (the targets of /proc/self/fd links "socket:[N]"). */
function ownSocketInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/self/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed between the listing and the read
    }
  }
  return inodes;
}

/**
 * A reader of the kernel's drop counter for this process's UDP socket bound to `port`, or null where there is no
 * /proc (not Linux) or the socket is not found. The socket is found once, by port among this process's own sockets
 * (its inode), so another process's socket on the same port never counts.
 */
export function udpDropCounter(port: number): (() => number) | null {
  try {
    const own = ownSocketInodes();
    const inode = readRows().find((r) => r.port === port && own.has(r.inode))?.inode;
    if (inode === undefined) return null;
    let last = 0;
    return () => {
      const row = readRows().find((r) => r.inode === inode);
      if (row) last = row.drops;
      return last;
    };
  } catch {
    return null;
  }
}
