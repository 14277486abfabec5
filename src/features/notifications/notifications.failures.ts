// What a user is told when a message did not go out: a failure class, never bytes from the far end (issue #20).
import { DestinationRefused } from '../../lib/destinations';

/** The receiver answered with an HTTP status outside 2xx; only the number is kept. */
export class HttpStatus extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status} from the receiver`);
  }
}

/** The receiver answered with a redirect: never followed, whatever its target. */
export class RedirectRefused extends Error {}

const TLS_CODES = /^(ERR_TLS|ERR_SSL|CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|HOSTNAME_MISMATCH|ERR_OSSL|ETLS$|EREQUIRETLS$)/;

/**
 * The class of a send failure, as shown in the delivery log, the test result and the logs: refused by
 * allowed_destinations, connection refused, timed out, TLS error, an HTTP or SMTP status number, a redirect, or a
 * protocol error. What the receiver wrote (a banner, a status line, an error page) never appears: a channel
 * aimed at a port that is not a receiver must not turn the appliance into a way to read that port.
 */
export function failureClass(err: unknown): string {
  if (err instanceof DestinationRefused) return `destination refused: ${err.message}`;
  if (err instanceof HttpStatus || err instanceof RedirectRefused) return err.message;
  const e = (err ?? {}) as { code?: unknown; responseCode?: unknown; name?: unknown };
  let code = typeof e.code === 'string' ? e.code : '';
  // The mailer wraps socket errors (ESOCKET, ECONNECTION) with the system's own code in its message.
  if ((code === 'ESOCKET' || code === 'ECONNECTION') && err instanceof Error) code = /\b(E[A-Z_]+)\b/.exec(err.message.replace(code, ''))?.[1] ?? code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ETIMEDOUT' || code === 'ESOCKETTIMEDOUT' || e.name === 'TimeoutError') return 'timed out';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EDNS') return 'host name not found';
  if (TLS_CODES.test(code)) return 'TLS error';
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'connection closed by the receiver';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'no route to the receiver';
  if (code === 'EAUTH') return 'SMTP authentication failed';
  if (typeof e.responseCode === 'number' && e.responseCode >= 400 && e.responseCode < 600) return `SMTP ${e.responseCode} from the server`;
  // The mailer's protocol errors, and the HTTP parser's (HPE_*: a port that does not speak HTTP).
  if (code === 'EPROTOCOL' || code === 'EHLO' || code === 'EENVELOPE' || code === 'EMESSAGE' || code.startsWith('HPE_'))
    return 'protocol error: the receiver did not answer as expected';
  return 'delivery failed';
}
