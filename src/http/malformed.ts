// Requests whose line or Host header the HTTP adapter cannot turn into a URL: marked by the listener, answered by the envelope.
import type { IncomingMessage } from 'node:http';

/**
 * What most requests carry and the URL parser keeps as it is: a name whose last label starts with a letter (so it is
 * not read as a number), or a dotted IPv4 address in canonical form; then an optional port. Anything else is
 * checked by the parser itself.
 */
const PLAIN_HOST =
  /^(?:(?:[A-Za-z0-9-]{1,63}\.){0,126}[A-Za-z][A-Za-z0-9-]{0,62}|(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d))(?::(\d{1,5}))?$/;

/** Why the Host header cannot name this server, or null; the same test as the HTTP adapter's, fast for plain names. */
export function hostProblem(host: string): string | null {
  const plain = /xn--/i.test(host) ? null : PLAIN_HOST.exec(host);
  if (plain) return plain[1] !== undefined && Number(plain[1]) > 65535 ? 'port out of range' : null;
  try {
    const url = new URL(`http://${host}/`);
    // @hono/node-server refuses a host the URL parser rewrote (other than a lower-cased name).
    if (url.hostname.length !== host.length && url.hostname !== host.replace(/:\d+$/, '')) return 'not a host name';
    return null;
  } catch {
    return 'not a host name';
  }
}

const refused = new WeakMap<IncomingMessage, string>();

/**
 * Checks what the adapter turns into the request URL. A malformed Host or a backslash in the path is neutralised
 * here and remembered, so that the app answers it with a 400 in the API's error body, its X-Request-ID and an
 * access-log line, instead of the adapter's bare 400.
 */
export function screenRequestTarget(req: IncomingMessage): void {
  const host = req.headers.host;
  const url = req.url ?? '';
  const problem = host !== undefined && host !== '' ? hostProblem(host) : null;
  const query = url.indexOf('?');
  const backslash = url.indexOf('\\');
  const badPath = backslash !== -1 && (query === -1 || backslash < query);
  if (problem === null && !badPath) return;
  refused.set(req, problem !== null ? `Malformed Host header (${problem})` : 'Malformed request target (backslash in the path)');
  if (problem !== null) req.headers.host = 'invalid-host.invalid';
  if (badPath) req.url = url.replace(/\\/g, '%5C');
}

/** Why screenRequestTarget refused this request, or undefined. */
export function malformedTarget(req: IncomingMessage | undefined): string | undefined {
  return req === undefined ? undefined : refused.get(req);
}
