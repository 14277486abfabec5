// Litestream 0.3.13 accepts any SFTP host key: confvault checks the server's key against replication.sftp_host_key before each start of Litestream and before a restore.
import ssh2 from 'ssh2';
import { pinnedFingerprint, sshFingerprint } from '../gitmirror/gitmirror.ssh';

const CHECK_TIMEOUT_MS = 15_000;

/**
 * The host key of the sftp:// replica's server, checked against `pin` (a SHA256 fingerprint or an ssh-keyscan line).
 * Only the key exchange runs: the verifier refuses every key, so nothing is authenticated or sent. Null when the
 * replica is not sftp:// or nothing is pinned.
 */
export async function checkSftpHostKey(replica: string, pin: string): Promise<string | null> {
  if (!replica.startsWith('sftp://') || !pin) return null;
  const u = new URL(replica);
  const where = `${u.hostname}:${u.port || 22}`;
  const expected = pinnedFingerprint(pin);
  const seen = await new Promise<string>((resolve, reject) => {
    const client = new ssh2.Client();
    let fingerprint: string | null = null;
    const done = (err?: Error) => {
      client.end();
      if (fingerprint) resolve(fingerprint);
      else reject(new Error(`replication: the host key of ${where} could not be read (${err?.message ?? 'no key offered'})`));
    };
    client.on('error', done);
    client.on('ready', () => done());
    client.connect({
      host: u.hostname.replace(/^\[|\]$/g, ''),
      port: Number(u.port || 22),
      username: decodeURIComponent(u.username) || 'confvault',
      readyTimeout: CHECK_TIMEOUT_MS,
      hostVerifier: (blob: Buffer) => {
        fingerprint = sshFingerprint(blob);
        return false;
      },
    });
  });
  if (seen !== expected) throw new Error(`replication: the host key of ${where} is ${seen}, not the pinned sftp_host_key ${expected}: Litestream not run`);
  return seen;
}
