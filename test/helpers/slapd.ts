// A real OpenLDAP server for tests: Debian's slapd on 127.0.0.1 with its own CA, LDAPS and plain ports, and a seed LDIF.
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { REPO_ROOT, tempDir } from './appliance';

const SLAPD = '/usr/sbin/slapd';
export const SUFFIX = 'dc=example,dc=org';
export const ROOT_DN = `cn=admin,${SUFFIX}`;
const ROOT_PW = 'root-secret';

/**
 * slapd and ldap-utils, installed by the lab's script when missing (apt-get, as root), as `npm test` in CI needs.
 * Returns why the directory tests cannot run here, or null.
 */
export function slapdUnavailable(): string | null {
  if (existsSync(SLAPD) && existsSync('/usr/bin/ldapmodify')) return null;
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return 'slapd is not installed and installing it needs root on Linux';
  const r = spawnSync('bash', [path.join(REPO_ROOT, 'test/lab/lab.sh'), 'packages', 'slapd', 'ldap-utils'], { encoding: 'utf8', timeout: 10 * 60_000 });
  if (r.status !== 0 || !existsSync(SLAPD)) return `installing slapd failed: ${(r.stderr || r.stdout || String(r.error)).slice(-500)}`;
  return null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

function openssl(cwd: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** A CA (ca.pem, ca.key) in `dir`, and with `serverName` a server certificate it signed for 127.0.0.1 and localhost. */
function makeCa(dir: string, name: string): void {
  openssl(dir, 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-keyout', 'ca.key', '-out', 'ca.pem');
}

function makeServerCert(dir: string): void {
  writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl(dir, 'req', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr');
  openssl(
    dir,
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-days',
    '2',
    '-extfile',
    'san.ext',
    '-out',
    'server.pem',
  );
}

export interface TestSlapd {
  dir: string;
  /** ldaps://127.0.0.1:PORT */
  ldapsUrl: string;
  /** ldap://127.0.0.1:PORT (StartTLS or plain) */
  ldapUrl: string;
  caFile: string;
  /** A CA that did not sign the server's certificate. */
  otherCaFile: string;
  /** Apply LDIF changes as the directory's root (ldapmodify). */
  modify(ldif: string): void;
  stop(): Promise<void>;
  /** Start again on the same ports with the same data (after stop). */
  start(): Promise<void>;
}

/**
 * Start slapd with the schema it needs (core, cosine, inetorgperson), the memberof overlay, and `seed` (LDIF below
 * SUFFIX) added. `opts.schema`: more schema text (say, Active Directory's attributes); the seed is added with
 * ManageDsaIT, so it may hold referral objects.
 */
export async function startSlapd(seed: string, opts: { schema?: string } = {}): Promise<TestSlapd> {
  const dir = tempDir('confvault-slapd-');
  const other = path.join(dir, 'other');
  mkdirSync(other);
  mkdirSync(path.join(dir, 'db'));
  makeCa(dir, 'confvault test CA');
  makeServerCert(dir);
  makeCa(other, 'some other CA');
  const [sPort, pPort] = [await freePort(), await freePort()];
  const conf = path.join(dir, 'slapd.conf');
  if (opts.schema) writeFileSync(path.join(dir, 'extra.schema'), opts.schema);
  writeFileSync(
    conf,
    [
      ...['core', 'cosine', 'inetorgperson'].map((s) => `include /etc/ldap/schema/${s}.schema`),
      ...(opts.schema ? [`include ${dir}/extra.schema`] : []),
      'modulepath /usr/lib/ldap',
      'moduleload back_mdb',
      'moduleload memberof',
      `pidfile ${dir}/slapd.pid`,
      `TLSCACertificateFile ${dir}/ca.pem`,
      `TLSCertificateFile ${dir}/server.pem`,
      `TLSCertificateKeyFile ${dir}/server.key`,
      'database mdb',
      'maxsize 10485760',
      `suffix "${SUFFIX}"`,
      `rootdn "${ROOT_DN}"`,
      `rootpw ${ROOT_PW}`,
      `directory ${dir}/db`,
      // memberOf on users and groups, kept by the server (only for entries added over LDAP, hence ldapadd below).
      'overlay memberof',
      'access to attrs=userPassword by self read by anonymous auth by * none',
      'access to * by * read',
      '',
    ].join('\n'),
  );
  const base = `dn: ${SUFFIX}\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n`;
  execFileSync('/usr/sbin/slapadd', ['-f', conf, '-q'], { input: base, stdio: ['pipe', 'ignore', 'pipe'] });
  const ldapsUrl = `ldaps://127.0.0.1:${sPort}`;
  const ldapUrl = `ldap://127.0.0.1:${pPort}`;
  let child: ChildProcess | null = null;
  const start = async () => {
    child = spawn(SLAPD, ['-f', conf, '-h', `${ldapsUrl}/ ${ldapUrl}/`, '-d', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (d) => (stderr += d));
    // Ready once the plain port answers a root search (bounded: 100 tries, 20 s).
    for (let i = 0; ; i++) {
      const r = spawnSync('ldapsearch', ['-x', '-H', ldapUrl, '-D', ROOT_DN, '-w', ROOT_PW, '-b', SUFFIX, '-s', 'base', 'dn'], { encoding: 'utf8' });
      if (r.status === 0) return;
      if (i >= 100 || child.exitCode !== null) throw new Error(`slapd did not start: ${stderr}`);
      await new Promise((res) => setTimeout(res, 200));
    }
  };
  const stop = () =>
    new Promise<void>((resolve) => {
      const c = child;
      if (!c || c.exitCode !== null) return resolve();
      c.once('exit', () => resolve());
      c.kill('SIGTERM');
    });
  await start();
  execFileSync('ldapmodify', ['-a', '-M', '-x', '-H', ldapUrl, '-D', ROOT_DN, '-w', ROOT_PW], { input: seed, stdio: ['pipe', 'ignore', 'pipe'] });
  return {
    dir,
    ldapsUrl,
    ldapUrl,
    caFile: path.join(dir, 'ca.pem'),
    otherCaFile: path.join(other, 'ca.pem'),
    modify(ldif) {
      execFileSync('ldapmodify', ['-x', '-H', ldapUrl, '-D', ROOT_DN, '-w', ROOT_PW], { input: ldif, stdio: ['pipe', 'ignore', 'pipe'] });
    },
    stop,
    start,
  };
}
