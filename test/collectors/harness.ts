// Shared by the collector tests: enrolment over HTTP and hand-signed requests (to tamper with one part at a time).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { REPO_ROOT, cliArgv, type TestAppliance } from '../helpers/appliance';
import { createEnrolToken } from '../../src/features/collectors/collectors.service';
import {
  HEADERS,
  PROTOCOL_PREFIX,
  PROTOCOL_VERSION,
  canonicalRequest,
  generateCollectorKeys,
  signRequest,
  type CollectorKeys,
} from '../../src/lib/collector-protocol';
import { SYSTEM_ACTOR } from '../../src/identity/actor';

export interface EnrolledCollector {
  id: number;
  zone: string;
  keys: CollectorKeys;
}

export function enrolBody(token: string, name: string, keys: CollectorKeys) {
  return { token, name, signing_key: keys.signing_public, sealing_key: keys.sealing_public, version: 'test' };
}

export async function postEnrol(t: TestAppliance, body: unknown, protocol = String(PROTOCOL_VERSION)): Promise<Response> {
  return fetch(`${t.url}${PROTOCOL_PREFIX}/enrol`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [HEADERS.protocol]: protocol },
    body: JSON.stringify(body),
  });
}

/** A collector enrolled with a fresh token through the real enrolment endpoint. */
export async function enrol(t: TestAppliance, zone: string, name: string): Promise<EnrolledCollector> {
  const keys = generateCollectorKeys();
  const { token } = createEnrolToken(t.appliance.db, SYSTEM_ACTOR, zone);
  const res = await postEnrol(t, enrolBody(token, name, keys));
  if (res.status !== 201) throw new Error(`enrol: ${res.status} ${await res.text()}`);
  const r = (await res.json()) as { collector_id: number; zone: string };
  return { id: r.collector_id, zone: r.zone, keys };
}

export interface SignOverrides {
  /** Sign this body but send `body`. */
  signedBody?: string;
  timestamp?: number;
  nonce?: string;
  protocol?: string;
  keys?: CollectorKeys;
}

/** The headers a collector sends for POST `route` with `body`, each part replaceable by a test. */
export function signedHeaders(c: EnrolledCollector, route: string, body: string, o: SignOverrides = {}): Record<string, string> {
  const timestamp = String(o.timestamp ?? Date.now());
  const nonce = o.nonce ?? randomBytes(18).toString('base64url');
  const canonical = canonicalRequest('POST', PROTOCOL_PREFIX + route, timestamp, nonce, o.signedBody ?? body);
  return {
    'content-type': 'application/json',
    [HEADERS.protocol]: o.protocol ?? String(PROTOCOL_VERSION),
    [HEADERS.id]: String(c.id),
    [HEADERS.timestamp]: timestamp,
    [HEADERS.nonce]: nonce,
    [HEADERS.signature]: signRequest((o.keys ?? c.keys).signing_private, canonical),
  };
}

export async function signedPost(t: TestAppliance, c: EnrolledCollector, route: string, payload: unknown, o: SignOverrides = {}): Promise<Response> {
  const body = JSON.stringify(payload);
  return fetch(`${t.url}${PROTOCOL_PREFIX}${route}`, { method: 'POST', headers: signedHeaders(c, route, body, o), body });
}

/** Waits (bounded) until `check` gives a value, looking every 100 ms; a timeout shows `output` (the children's logs). */
export async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, output: () => string, ms = 90_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface CollectorChild {
  child: ChildProcess;
  output: () => string;
  exited: Promise<unknown>;
}

/**
 * A child process (`confvault collector run --data-dir SITE`, or any `argv` of the executable, under `prefix` such as
 * `ip netns exec NS`) with its output kept; `children` holds it until it exits, for the file's `after` to kill.
 */
export function spawnConfvault(argv: string[], children: Set<ChildProcess>, env: NodeJS.ProcessEnv = {}, prefix: string[] = []): CollectorChild {
  const [cmd, ...args] = [...prefix, process.execPath, ...cliArgv(), ...argv];
  const child = spawn(cmd, args, { cwd: REPO_ROOT, env: { ...process.env, CONFVAULT_LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
  // 'close', not 'exit': the child's last lines may still be in the pipe when it exits.
  const exited = new Promise((resolve) => child.once('close', resolve)).finally(() => children.delete(child));
  return { child, output: () => output, exited };
}
